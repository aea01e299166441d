/**
 * A prototype for objects that stand in for a web `Request` or `Response` and build the real one
 * only when needed: every getter and method of `of` (the real class's prototype) is answered by the
 * real object `real(this)` makes, and the prototype chain ends in `of`, so `instanceof` holds. The
 * stand-in then overrides what it can answer itself (see `lightResponse` and the Node adapter's
 * `nodeRequest`).
 */
export function lazyPrototype<Self>(of: object, real: (self: Self) => object): Record<string | symbol, unknown> {
  const proto: Record<string | symbol, unknown> = {}
  for (const name of Object.getOwnPropertyNames(of)) {
    if (name === 'constructor') continue
    const descriptor = Object.getOwnPropertyDescriptor(of, name)!
    if (descriptor.get) {
      Object.defineProperty(proto, name, {
        configurable: true,
        get(this: Self) {
          return Reflect.get(real(this), name)
        },
      })
    } else if (typeof descriptor.value === 'function') {
      Object.defineProperty(proto, name, {
        configurable: true,
        value(this: Self, ...args: unknown[]) {
          const target = real(this)
          return (Reflect.get(target, name) as (...a: unknown[]) => unknown).apply(target, args)
        },
      })
    }
  }
  Object.setPrototypeOf(proto, of)
  return proto
}
