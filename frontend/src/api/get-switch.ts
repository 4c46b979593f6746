import { queryOptions, useQuery } from '@tanstack/react-query';

import { api, unwrap } from '@/lib/api-client';

export function getSwitch(switchId: number, signal?: AbortSignal) {
  return unwrap(
    api.GET('/api/v1/switches/{switch_id}', { params: { path: { switch_id: switchId } }, signal }),
  );
}

export const getSwitchQueryOptions = (switchId: number) =>
  queryOptions({
    queryKey: ['switches', 'detail', switchId],
    queryFn: ({ signal }) => getSwitch(switchId, signal),
  });

export function useSwitch(switchId: number | undefined) {
  return useQuery({ ...getSwitchQueryOptions(switchId ?? 0), enabled: switchId !== undefined });
}
