import { formatDelay, formatPercent, formatRate, formatRelative } from './format';

describe('formatRate', () => {
  it.each([
    [48e6, '48 Mbit/s'],
    [1656e6, '1.656 Gbit/s'],
    [329.4e6, '329.4 Mbit/s'],
    [125_000, '125 kbit/s'],
    [999, '999 bit/s'],
  ])('%d bit/s reads %s', (bps, text) => expect(formatRate(bps)).toBe(text));

  it('shows a dash for missing values', () => {
    expect(formatRate(undefined)).toBe('—');
    expect(formatRate(Number.NaN)).toBe('—');
  });
});

describe('formatDelay', () => {
  it('picks the unit that fits', () => {
    expect(formatDelay(0.0207)).toBe('20.7 ms');
    expect(formatDelay(0.0007)).toBe('700 µs');
    expect(formatDelay(2.5)).toBe('2.5 s');
    expect(formatDelay(0)).toBe('0 s');
  });

  it('reads null as unbounded (the API has no infinity in JSON)', () => {
    expect(formatDelay(null)).toBe('unbounded');
    expect(formatDelay(undefined)).toBe('—');
  });
});

it('formats ratios and relative times', () => {
  expect(formatPercent(0.015)).toBe('1.5 %');
  expect(formatRelative('2026-01-01T00:00:00Z', Date.parse('2026-01-01T00:05:00Z'))).toBe('5 min ago');
});
