import { mapStorage } from '../../examples/custom-storage/map-storage.js'
import { describeStorageConformance } from '../../src/testing/index.js'

// The storage a user writes themselves (examples/custom-storage/) runs the same kit.
describeStorageConformance('examples/custom-storage (a Map per model)', () => mapStorage())
