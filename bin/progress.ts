// What `export`, `import` and `migrate` show while they run: a progress bar (cli-progress) on a
// terminal, and when the output is piped or a file, one plain line per model as each is done.
import cliProgress from 'cli-progress'
import type { RecordsProgress } from '../src/index.js'

const DONE = { export: 'exported', import: 'written', verify: 'verified' } as const
const DOING = { export: 'exporting', import: 'writing', verify: 'verifying' } as const

export interface Progress {
  /** Feeds `exportRecords` / `importRecords`' onProgress. */
  (progress: RecordsProgress): void
  /** Ends the bar, or prints the last model's line. */
  stop(): void
}

/**
 * A reporter on `stream`: on a terminal one bar, started again as each model (of each stage)
 * starts; elsewhere a line `<verb> <model>: <n> records` as each model of the `lines` stages ends.
 * `totals` supplies a model's count where the progress has none (a migrate's writes, counted by
 * its export).
 */
export function progressOn(
  stream: NodeJS.WriteStream,
  lines: readonly RecordsProgress['stage'][],
  totals?: ReadonlyMap<string, number>,
): Progress {
  let current: RecordsProgress | null = null
  const line = () => {
    if (current && lines.includes(current.stage))
      stream.write(`${DONE[current.stage]} ${current.model}: ${current.done.toLocaleString('en')} record${current.done === 1 ? '' : 's'}\n`)
  }
  if (!stream.isTTY) {
    const report = ((progress: RecordsProgress) => {
      if (current && (current.stage !== progress.stage || current.model !== progress.model)) line()
      current = progress
    }) as Progress
    report.stop = () => {
      line()
      current = null
    }
    return report
  }
  const counted = new cliProgress.SingleBar(
    // Each model's bar is cleared when the next starts: the terminal shows the one under way.
    { stream, format: '{stage} {model} |{bar}| {percentage}% {value}/{total} records', hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  )
  // An import reads a file whose counts come last: its writes are counted, with no total.
  const uncounted = new cliProgress.SingleBar(
    { stream, format: '{stage} {model}: {value} records', hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  )
  let bar: cliProgress.SingleBar | null = null
  const report = ((given: RecordsProgress) => {
    const known = given.total ?? totals?.get(given.model)
    const progress = known === undefined ? given : { ...given, total: known }
    if (!current || current.stage !== progress.stage || current.model !== progress.model) {
      bar?.stop()
      bar = progress.total === undefined ? uncounted : counted
      bar.start(progress.total ?? 0, progress.done, { stage: DOING[progress.stage], model: progress.model })
    } else bar?.update(progress.done)
    current = progress
  }) as Progress
  report.stop = () => {
    bar?.stop()
    bar = null
    current = null
  }
  return report
}
