import { columnKind, type ColumnKind, type FieldSpec } from '../domain/describe.js'
import { descriptions } from '../domain/descriptions/index.js'
import type { ModelName, RecordOf } from './types.js'

export type { ColumnKind }

export interface UniqueConstraint<M extends ModelName> {
  name: string
  fields: readonly (keyof RecordOf<M> & string)[]
}

export interface ModelDefinition<M extends ModelName> {
  /**
   * The look-ups the service makes, each a set of fields compared for equality (then ordered by
   * `createdAt`, `id`); a storage should serve each from one index.
   */
  indexes: readonly (readonly (keyof RecordOf<M> & string)[])[]
  /**
   * Lists in another order than `createdAt`: `where` fields compared for equality, ordered by
   * `orderBy` then `id`. A SQL storage serves each from an index on (`where`…, `orderBy`, `id`); the
   * memory storage sorts the look-up's rows (10k affiliates in about 2 ms).
   */
  ordered: readonly { where: readonly (keyof RecordOf<M> & string)[]; orderBy: keyof RecordOf<M> & string }[]
  /** Field sets no two records may share (a set holding a null never collides). */
  unique: readonly UniqueConstraint<M>[]
  /** String fields that `contains` searches, case-insensitively. */
  search: readonly (keyof RecordOf<M> & string)[]
  /** Every field, in a fixed order, with how a column keeps it and whether it may be null. */
  fields: readonly { name: keyof RecordOf<M> & string; kind: ColumnKind; nullable: boolean }[]
}

/** A description as storages read it: constraints and look-ups over the record's fields. */
type ModelOf<M extends ModelName> = {
  fields: Record<string, FieldSpec>
  unique?: ModelDefinition<M>['unique']
  indexes?: ModelDefinition<M>['indexes']
  ordered?: ModelDefinition<M>['ordered']
}

function define<M extends ModelName>(model: M): ModelDefinition<M> {
  const { fields, unique = [], indexes = [], ordered = [] } = descriptions[model] as ModelOf<M>
  const entries = Object.entries(fields) as [keyof RecordOf<M> & string, FieldSpec][]
  const named = (test: (spec: FieldSpec) => boolean) => entries.filter(([, spec]) => test(spec)).map(([name]) => name)
  return {
    indexes: [...named((spec) => spec.indexed === true).map((name) => [name] as const), ...indexes],
    unique: [...entries.flatMap(([name, spec]) => (spec.unique === undefined ? [] : [{ name: spec.unique, fields: [name] }])), ...unique],
    ordered,
    search: named((spec) => spec.searched === true),
    fields: entries.map(([name, spec]) => ({ name, kind: columnKind(spec), nullable: spec.nullable === true })),
  }
}

/**
 * What a storage must know of each collection: lookups to index, constraints to enforce, text to
 * search, the fields and their kinds. Derived from the one description of the records (`schema`).
 */
export const models: { [M in ModelName]: ModelDefinition<M> } = {
  campaigns: define('campaigns'),
  affiliates: define('affiliates'),
  links: define('links'),
  commissions: define('commissions'),
  payouts: define('payouts'),
  apiKeys: define('apiKeys'),
  idempotency: define('idempotency'),
  events: define('events'),
  webhooks: define('webhooks'),
  webhookDeliveries: define('webhookDeliveries'),
  sequences: define('sequences'),
  rollups: define('rollups'),
  clicks: define('clicks'),
  settings: define('settings'),
  portalTokens: define('portalTokens'),
  adminSessions: define('adminSessions'),
  customers: define('customers'),
  sales: define('sales'),
  saleRefunds: define('saleRefunds'),
  integrations: define('integrations'),
  providerEvents: define('providerEvents'),
  promoCodes: define('promoCodes'),
  notifications: define('notifications'),
  notificationPreferences: define('notificationPreferences'),
}

export const modelNames = Object.keys(models) as ModelName[]

const kinds = new Map<string, ReadonlyMap<string, ColumnKind>>(
  modelNames.map((model) => [model, new Map(models[model].fields.map((field) => [field.name, field.kind]))]),
)

/** A field's column kind; throws when the model has no such field (field names reach SQL only after this). */
export function kindOf(model: ModelName, field: string): ColumnKind {
  const kind = kinds.get(model)?.get(field)
  if (!kind) throw new Error(`${model} has no field ${field}`)
  return kind
}
