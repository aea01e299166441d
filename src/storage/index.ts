// `affiliate-service/storage`: what a storage implementer needs. Write a driver (plain records in
// and out), wrap it with `defineStorage`, and check it with the kit in `affiliate-service/testing`.
export { defineStorage } from './define.js'
export { conditionHolds, isRange, RANGE_OPERATORS, UniqueViolationError } from './types.js'
export type {
  Condition,
  DriverDeltas,
  DriverPatch,
  DriverQuery,
  DriverTransaction,
  DriverWhere,
  FindQuery,
  ModelName,
  NumericField,
  RangeCondition,
  RecordDeltas,
  RecordOf,
  RecordPage,
  RecordPatch,
  Scalar,
  Storage,
  StorageDriver,
  StorageTransaction,
  StoredRecord,
  TransactionOptions,
  Where,
} from './types.js'
export { models, modelNames } from './models.js'
export type { ColumnKind, ModelDefinition, UniqueConstraint } from './models.js'
// `schema`: every model's description (its public name since before descriptions held requests and forms too).
export { descriptions as schema } from '../domain/descriptions/index.js'
export type { FieldKind, FieldSpec, FormControl, InputSpec, ModelSpec, ModelSpec as ModelSchema } from '../domain/describe.js'
export type * from '../domain/records.js'
export * as sampleRecords from './sample-records.js'
