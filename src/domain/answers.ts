import type { JsonSchema } from './checks.js'
import { answerList, fieldJsonSchema, type AnswerOfModel, type FieldSpec, type ModelSpec } from './describe.js'
import { descriptions, type Descriptions } from './descriptions/index.js'
import { formatMoney, moneyNumber } from './money.js'
import type { ModelRecords } from './records.js'

// The API's answers, derived from the models' descriptions: each answer's type, the function making
// it from a record, and its JSON Schema (what the OpenAPI document says it is).

type AnswersOf<M extends keyof Descriptions> = Descriptions[M] extends { answers: infer A } ? keyof A & string : never

/** One of a model's answers (`answers[A]` of its description), as the API gives it. */
export type AnswerOf<M extends keyof Descriptions, A extends AnswersOf<M>> = AnswerOfModel<Descriptions[M], A>

/** An answer's fields, in order, each with its description and its name in answers. */
export function answerFields(model: keyof Descriptions, answer: string): [field: string, spec: FieldSpec, name: string][] {
  const { fields, answers }: Pick<ModelSpec, 'fields' | 'answers'> = descriptions[model]
  if (!answers?.[answer]) throw new Error(`${model} has no answer ${answer}`)
  return answerList({ fields, answers }, answer).map((field) => [field, fields[field]!, fields[field]!.answerAs ?? field])
}

/** The JSON Schema of one of a model's answers: an object with every field required. */
export function answerJsonSchema(model: keyof Descriptions, answer: string): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const [, spec, name] of answerFields(model, answer)) properties[name] = fieldJsonSchema(spec)
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false }
}

type Convert = (value: unknown) => unknown

const copyList: Convert = (value) => [...(value as string[])]
const parseMap: Convert = (value) => (value === null ? null : JSON.parse(value as string))
const moneyString: Convert = (value) => (value === null ? null : formatMoney(value as number))
const moneyAmount: Convert = (value) => (value === null ? null : moneyNumber(value as number))

/**
 * The function turning a stored record into one of its API answers: fields in answer order,
 * renamed by `answerAs`, money in its wire form, lists copied, maps parsed. test/unit/schema.test.ts checks every
 * answer against `answerJsonSchema`.
 */
export function answerMapper<M extends keyof Descriptions, const A extends AnswersOf<M>>(
  model: M,
  answer: A,
): (record: ModelRecords[M]) => AnswerOf<M, A> {
  const listed = answerFields(model, answer)
  const fields = listed.map(([field]) => field)
  const names = listed.map(([, , name]) => name)
  const converts = listed.map(([, spec]): Convert | null =>
    spec.kind === 'money'
      ? spec.wire === 'string'
        ? moneyString
        : moneyAmount
      : spec.kind === 'list'
        ? copyList
        : spec.kind === 'map'
          ? parseMap
          : null,
  )
  const count = fields.length
  // Every answer starts as a copy of one object with all its keys in order: copies share a shape,
  // and filling them only overwrites (adding keys one by one is several times slower).
  const template: Record<string, unknown> = Object.fromEntries(names.map((name) => [name, null]))
  return (record) => {
    const values: Record<string, unknown> = record
    const out = { ...template }
    for (let i = 0; i < count; i++) {
      const convert = converts[i]
      const value = values[fields[i]!]
      out[names[i]!] = convert ? convert(value) : value
    }
    return out as AnswerOf<M, A>
  }
}
