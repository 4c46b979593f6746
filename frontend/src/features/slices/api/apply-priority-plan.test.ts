import { mockFetch, signInForTests } from '@/testing/test-utils';

import { applyPlanChanges, planChanges, PlanStepError } from './apply-priority-plan';

const stored = [
  { id: 1, name: 'DC', priority: 7 },
  { id: 2, name: 'Enterprise', priority: 5 },
  { id: 3, name: 'Peering', priority: 7 },
];

it('changes only the slices the plan moves: down first, then up', () => {
  const changes = planChanges({ DC: 7, Enterprise: 7, Peering: 5, New: 6 }, stored);
  expect(changes).toEqual([
    { sliceId: 3, name: 'Peering', from: 7, to: 5 },
    { sliceId: 2, name: 'Enterprise', from: 5, to: 7 },
  ]);
});

it('patches each slice and says what was applied when a step is refused', async () => {
  signInForTests();
  const calls = mockFetch({
    'PATCH /api/v1/slices/3': { id: 3 },
    'PATCH /api/v1/slices/2': () => ({ status: 409, body: { type: 'https://sliceportal.dev/problems/admission-rejected', title: 'Slices would miss their delay bounds', status: 409, detail: 'no room' } }),
  });
  const error = await applyPlanChanges(planChanges({ Enterprise: 7, Peering: 5 }, stored)).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PlanStepError);
  expect((error as PlanStepError).applied.map((c) => c.name)).toEqual(['Peering']);
  expect((error as Error).message).toMatch(/Enterprise from priority 5 to 7 was refused: no room \(already applied: Peering → 5\)/);
  expect(calls.map((c) => [c.method, c.path, c.body])).toEqual([
    ['PATCH', '/api/v1/slices/3', { priority: 5 }],
    ['PATCH', '/api/v1/slices/2', { priority: 7 }],
  ]);
});
