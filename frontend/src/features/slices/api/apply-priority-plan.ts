/**
 * Apply a priority plan to the slices already stored: one PATCH per slice whose priority
 * changes. The slice being created is not stored yet; its planned priority is returned for
 * the caller to use.
 *
 * Slices that move down go first, then those that move up: moving a slice down never makes
 * the slices above it worse, so the intermediate states are the likeliest to pass admission.
 * If a step is refused, the error names the slice and says which changes were already made.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';

import type { SlicePublic } from '@/lib/api/schema';
import { ApiError, errorMessage } from '@/lib/problem';

import { updateSlice } from './update-slice';

export interface PlanChange {
  sliceId: number;
  name: string;
  from: number;
  to: number;
}

/** The stored slices whose priority the plan changes, in the order they are applied. */
export function planChanges(
  plan: Record<string, number>,
  stored: readonly Pick<SlicePublic, 'id' | 'name' | 'priority'>[],
): PlanChange[] {
  const changes: PlanChange[] = [];
  for (const slice of stored) {
    const to = plan[slice.name];
    if (to !== undefined && to !== slice.priority) {
      changes.push({ sliceId: slice.id, name: slice.name, from: slice.priority, to });
    }
  }
  const down = changes.filter((c) => c.to < c.from).sort((a, b) => a.to - b.to);
  const up = changes.filter((c) => c.to > c.from).sort((a, b) => b.to - a.to);
  return [...down, ...up];
}

export class PlanStepError extends Error {
  constructor(
    readonly change: PlanChange,
    readonly applied: PlanChange[],
    override readonly cause: unknown,
  ) {
    super(
      `changing ${change.name} from priority ${change.from} to ${change.to} was refused: ${errorMessage(cause)}` +
        (applied.length
          ? ` (already applied: ${applied.map((c) => `${c.name} → ${c.to}`).join(', ')})`
          : ''),
    );
  }

  get problem(): ApiError | null {
    return this.cause instanceof ApiError ? this.cause : null;
  }
}

export async function applyPlanChanges(changes: readonly PlanChange[]): Promise<PlanChange[]> {
  const applied: PlanChange[] = [];
  for (const change of changes) {
    try {
      await updateSlice(change.sliceId, { priority: change.to });
    } catch (cause) {
      throw new PlanStepError(change, applied, cause);
    }
    applied.push(change);
  }
  return applied;
}

export function useApplyPlanChanges() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: applyPlanChanges,
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['slices'] }),
  });
}
