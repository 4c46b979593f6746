import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { DEFAULT_PARAMETERS, LIMITS, searchFromSettings, settingsFromSearch } from './report-settings';

describe('report settings in the URL', () => {
  it('reads the scope and parameters, falling back to the defaults on nonsense', () => {
    expect(settingsFromSearch(new URLSearchParams(''))).toEqual({ scope: { kind: 'network' }, parameters: DEFAULT_PARAMETERS });
    expect(settingsFromSearch(new URLSearchParams('link=5&growth=2.5&horizon=12&window=0'))).toEqual({
      scope: { kind: 'link', id: 5 },
      parameters: { growth_percent: 2.5, horizon_months: 12, telemetry_window_s: 0 },
    });
    expect(settingsFromSearch(new URLSearchParams('switch=x&growth=-1&horizon=1.5&window=abc'))).toEqual({
      scope: { kind: 'network' },
      parameters: DEFAULT_PARAMETERS,
    });
  });

  it('writes only what differs from the defaults, and round-trips', () => {
    expect(searchFromSettings({ scope: { kind: 'network' }, parameters: DEFAULT_PARAMETERS }).toString()).toBe('');
    const settings = { scope: { kind: 'switch', id: 3 } as const, parameters: { ...DEFAULT_PARAMETERS, horizon_months: 36 } };
    expect(searchFromSettings(settings).toString()).toBe('switch=3&horizon=36');
    expect(settingsFromSearch(searchFromSettings(settings))).toEqual(settings);
  });

  it("mirrors the API's defaults and limits (openapi.json)", () => {
    type Parameter = { name: string; schema: { default?: number; maximum?: number; minimum?: number } };
    const openapi = JSON.parse(readFileSync(resolve(process.cwd(), 'openapi.json'), 'utf8')) as {
      paths: Record<string, { get: { parameters: Parameter[] } }>;
    };
    const parameter = (name: string) => openapi.paths['/api/v1/reports/network']!.get.parameters.find((p) => p.name === name)!.schema;
    expect(parameter('growth_percent')).toMatchObject({ default: DEFAULT_PARAMETERS.growth_percent, minimum: 0, maximum: LIMITS.growthPercent });
    expect(parameter('horizon_months')).toMatchObject({ default: DEFAULT_PARAMETERS.horizon_months, minimum: 1, maximum: LIMITS.horizonMonths });
    expect(parameter('telemetry_window_s')).toMatchObject({ default: DEFAULT_PARAMETERS.telemetry_window_s, minimum: 0, maximum: LIMITS.windowS });
  });
});
