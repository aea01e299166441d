export { describeStorageConformance } from './storage-conformance.js'
export type { StorageConformanceOptions, StorageFactory } from './storage-conformance.js'
export * as sampleRecords from '../storage/sample-records.js'
