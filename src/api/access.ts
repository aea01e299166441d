import { forbiddenWorkspace, notFound } from '../errors.js'
import type { Principal } from '../keys/types.js'
import type { Scalar } from '../storage/types.js'

/** On whose behalf an operation runs. */
export interface Access {
  /** The workspaces it may touch; null for the embedding app itself, which may touch all. */
  workspaceIds: readonly string[] | null
  /** Recorded on the links it creates. */
  userId: string | null
}

/** The embedding app calling `service.api` directly: every workspace. */
export const trusted: Access = { workspaceIds: null, userId: null }

export const accessOf = (principal: Principal): Access => ({
  workspaceIds: principal.workspaceIds.map((id) => id.toLowerCase()),
  userId: principal.userId,
})

export const canSee = (access: Access, workspaceId: string): boolean =>
  access.workspaceIds === null || access.workspaceIds.includes(workspaceId)

/** 403 unless `workspaceId` is one of the caller's. */
export function requireWorkspace(access: Access, workspaceId: string): void {
  if (!canSee(access, workspaceId)) throw forbiddenWorkspace()
}

/** The record when the caller may see it; else 404, the same answer as for an id that does not exist. */
export function visible<R extends { workspaceId: string }>(access: Access, record: R | null, what: string): R {
  if (!record || !canSee(access, record.workspaceId)) throw notFound(what)
  return record
}

/** The `where` that limits a list to the caller's workspaces, or to one of them when asked. */
export function workspaceScope(access: Access, workspaceId: string | undefined): { workspaceId?: Scalar | { in: readonly Scalar[] } } {
  if (workspaceId !== undefined) {
    requireWorkspace(access, workspaceId)
    return { workspaceId }
  }
  return access.workspaceIds === null ? {} : { workspaceId: { in: access.workspaceIds } }
}
