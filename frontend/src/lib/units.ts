/**
 * Form units: people type Mbit/s and milliseconds; the API takes bit/s and seconds. Every
 * conversion goes through here so a form never mixes them up.
 */
export const MBIT = 1e6;
export const MS = 1e-3;

/** A decimal number typed by a person ('' → null; ',' accepted as the decimal point). */
export function parseDecimal(text: string): number | null {
  const trimmed = text.trim().replace(',', '.');
  if (trimmed === '') return null;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) return Number.NaN;
  return Number(trimmed);
}

/** A number shown in an input without float noise (0.1 + 0.2 → '0.3'). */
export function inputText(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '';
  return String(Number(value.toPrecision(12)));
}
