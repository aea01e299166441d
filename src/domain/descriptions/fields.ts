import type { FieldKind, FieldSpec } from '../describe.js'

// The words the descriptions are written in: a field of each kind, with what it adds.

type Options = Omit<FieldSpec, 'kind'>

const kind =
  <K extends FieldKind>(kind: K) =>
  <const O extends Options = {}>(options?: O): { kind: K } & NoInfer<O> =>
    ({ kind, ...options }) as { kind: K } & O

export const text = kind('text')
export const int = kind('int')
export const bool = kind('bool')
export const list = kind('list')
export const timestamp = kind('timestamp')

/** Money kept in minor units, named `answerAs` in answers and requests. */
export const money = <const A extends string, const O extends Omit<Options, 'answerAs'> = {}>(
  answerAs: A,
  options?: O,
): { kind: 'money'; answerAs: A } & NoInfer<O> => ({ kind: 'money', answerAs, ...options }) as { kind: 'money'; answerAs: A } & O

/** Optional when created, and changeable after. */
export const editable = { create: 'optional', update: 'optional' } as const
/** Required when created, and changeable after. */
export const required = { create: 'required', update: 'optional' } as const

export const stamps = { createdAt: timestamp(), updatedAt: timestamp() }
export const indexedText = text({ indexed: true })
export const nullableText = text({ nullable: true })
