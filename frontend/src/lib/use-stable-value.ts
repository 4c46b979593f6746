import { useMemo } from 'react';

/** The same object as long as its JSON does not change (for memo keys built each render). */
export function useStableValue<T>(value: T): T {
  const json = JSON.stringify(value);
  // The JSON is the identity: a new object with the same content keeps the old reference.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => value, [json]);
}
