// Connection strings in log lines and errors: never their password.
import { describe, expect, it } from 'vitest'
import { redactUrl } from '../../src/redact.js'

describe('redactUrl', () => {
  it.each([
    ['redis://:hunter2@cache:6379/0', 'redis://:***@cache:6379/0'],
    ['rediss://default:hunter2@cache.example.com:6380', 'rediss://default:***@cache.example.com:6380'],
    ['postgres://app:hunter2@db.internal:5432/app', 'postgres://app:***@db.internal:5432/app'],
    ['postgres://app:hunter2%40x@db/app?sslmode=require&password=hunter2', 'postgres://app:***@db/app?sslmode=require&password=***'],
    ['postgres://postgres@127.0.0.1:5432/test', 'postgres://postgres@127.0.0.1:5432/test'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
  ])('%s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown)
    expect(redactUrl(url)).not.toContain('hunter2')
  })

  it('masks what it can in a string that is not a URL', () => {
    expect(redactUrl('host=db user=app password=hunter2 dbname=app')).toBe('host=db user=app password=*** dbname=app')
    expect(redactUrl('not a url //user:hunter2@host')).not.toContain('hunter2')
  })
})
