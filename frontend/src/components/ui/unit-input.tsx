import type { InputHTMLAttributes, ReactNode } from 'react';

/**
 * A text input with its unit shown after it. Props (id, aria-*) go to the input itself, so a
 * `Field` label names the input, not the wrapper.
 */
export function UnitInput({ unit, ...props }: InputHTMLAttributes<HTMLInputElement> & { unit: ReactNode }) {
  return (
    <div className="input-unit">
      <input type="text" inputMode="decimal" autoComplete="off" {...props} />
      <span className="unit" aria-hidden="true">
        {unit}
      </span>
    </div>
  );
}
