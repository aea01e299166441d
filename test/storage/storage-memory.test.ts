import { memoryStorage } from '../../src/index.js'
import { describeStorageConformance } from '../../src/testing/index.js'

describeStorageConformance('memory', () => memoryStorage())
