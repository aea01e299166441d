// A database file handed to sql.js without reading it whole: a read-only snapshot of a file of
// hundreds of MB (the export beside a running server, a migration) reads the pages it asks for
// from the open file, and keeps in memory only the pages written over it (a journal's replay, a
// migration of an older schema), never on disk. bench/migrate.ts: 1M records moved with a peak
// below the file's own size.
//
// sql.js keeps a database in Emscripten's in-memory file system, which takes the bytes it is given
// with `slice(0, length)`, reads them with `subarray(begin, end)`, writes with `set(bytes, at)` (and
// grows the file only when a write goes past `length`). This class answers those four from the
// file. test/storage/records-snapshot.test.ts reads every record through it, with a journal
// replayed over it, against the storage that wrote them, and a schema-1 file upgraded over it
// (pages written past its end) against the same file opened for writing.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

/** Bytes a written-over piece of the file is kept in. */
const CHUNK = 4096

interface Source {
  fd: number
  size: number
  /** Pieces of the file written over, by their index. */
  written: Map<number, Uint8Array>
  closed: boolean
}

export class FileBytes extends Uint8Array<ArrayBuffer> {
  /**
   * @param capacity what `length` answers: the file's size for the bytes handed to sql.js (it
   *   writes that many), and past any size for the copy it keeps (so it never grows it by copying)
   */
  private constructor(
    private readonly source: Source,
    capacity: number,
  ) {
    super(new ArrayBuffer(0))
    Object.defineProperty(this, 'length', { value: capacity })
  }

  /** The file at `path`, opened for reading; `close()` closes it. */
  static open(path: string): FileBytes {
    const fd = openSync(path, 'r')
    return new FileBytes({ fd, size: fstatSync(fd).size, written: new Map(), closed: false }, fstatSync(fd).size)
  }

  /** The file's size when it was opened. */
  get size(): number {
    return this.source.size
  }

  /** sql.js taking the bytes: the copy it keeps reads the same file. */
  override slice(): FileBytes {
    return new FileBytes(this.source, Number.MAX_SAFE_INTEGER)
  }

  /** The bytes from `begin` to `end`: read from the file, with the pieces written over them. */
  override subarray(begin = 0, end: number = this.source.size): Uint8Array<ArrayBuffer> {
    const { fd, size, written, closed } = this.source
    if (closed) throw new Error('The database file was closed')
    const out = new Uint8Array(Math.max(0, end - begin))
    const last = Math.min(end, size)
    for (let done = 0; begin + done < last; ) {
      const read = readSync(fd, out, done, last - begin - done, begin + done)
      if (read === 0) break
      done += read
    }
    for (let index = Math.floor(begin / CHUNK); index * CHUNK < end; index++) {
      const chunk = written.get(index)
      if (!chunk) continue
      const from = Math.max(begin, index * CHUNK)
      const to = Math.min(end, (index + 1) * CHUNK)
      out.set(chunk.subarray(from - index * CHUNK, to - index * CHUNK), from - begin)
    }
    return out
  }

  /** Writes `bytes` at `offset`, in memory only. */
  override set(bytes: ArrayLike<number>, offset = 0): void {
    // sql.js writes from its heap (an Int8Array view): the same bytes, read unsigned.
    const from = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Uint8Array.from(bytes)
    for (let at = 0; at < from.length; ) {
      const position = offset + at
      const index = Math.floor(position / CHUNK)
      let chunk = this.source.written.get(index)
      if (!chunk) {
        chunk = this.subarray(index * CHUNK, (index + 1) * CHUNK)
        this.source.written.set(index, chunk)
      }
      const within = position - index * CHUNK
      const count = Math.min(CHUNK - within, from.length - at)
      chunk.set(from.subarray(at, at + count), within)
      at += count
    }
  }

  close(): void {
    if (this.source.closed) return
    this.source.closed = true
    closeSync(this.source.fd)
  }
}
