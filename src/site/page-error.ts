import type { Link } from './shell.js'

/** Answers a refused form or page with a status; its text is shown on a page of its own. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly link?: Link,
    readonly headers?: Record<string, string>,
  ) {
    super(message)
  }
}
