import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { UnitInput } from '@/components/ui/unit-input';
import { SLICE_PRIORITIES } from '@/lib/analysis';
import type { LinkDocument } from '@/lib/api/schema';
import { formatRate } from '@/lib/format';
import { MBIT, inputText, parseDecimal } from '@/lib/units';

export interface Scenario {
  capacityBps: number;
  rateScale: number;
  /** New priority by slice name. */
  priorities: Record<string, number>;
}

export function baseScenario(capacityBps: number): Scenario {
  return { capacityBps, rateScale: 1, priorities: {} };
}

export function isBase(scenario: Scenario, capacityBps: number): boolean {
  return (
    scenario.capacityBps === capacityBps &&
    scenario.rateScale === 1 &&
    Object.keys(scenario.priorities).length === 0
  );
}

/** The link document as the scenario changes it (rates and bursts scale together). */
export function applyScenario(doc: LinkDocument, scenario: Scenario): LinkDocument {
  return {
    ...doc,
    capacity_bps: scenario.capacityBps,
    slices: doc.slices.map((s) => ({
      ...s,
      rate_bps: s.rate_bps * scenario.rateScale,
      priority: scenario.priorities[s.name] ?? s.priority,
    })),
  };
}

/**
 * Change the capacity, scale every rate, move slices between priorities; the view beside it
 * recomputes at once (the API's analytics, no database change). Nothing is saved.
 */
export function WhatIfPanel({
  doc,
  capacityBps,
  scenario,
  onChange,
}: {
  doc: LinkDocument;
  capacityBps: number;
  scenario: Scenario;
  onChange: (scenario: Scenario) => void;
}) {
  const capacityMbps = scenario.capacityBps / MBIT;
  const sliderMax = Math.max(capacityMbps * 2, (capacityBps / MBIT) * 3);
  return (
    <div className="form" aria-label="What-if">
      <Field label={`Capacity: ${formatRate(scenario.capacityBps)}`} hint={`Now ${formatRate(capacityBps)}.`}>
        <input
          type="range"
          min={Math.max(1, Math.floor((capacityBps / MBIT) * 0.25))}
          max={Math.ceil(sliderMax)}
          step="any"
          value={capacityMbps}
          onChange={(e) => onChange({ ...scenario, capacityBps: Number(e.target.value) * MBIT })}
        />
      </Field>
      <Field label="Capacity (exact)">
        <UnitInput
            unit="Mbit/s"
            key={inputText(capacityMbps)}
            defaultValue={inputText(Number(capacityMbps.toPrecision(6)))}
            onBlur={(e) => {
              const value = parseDecimal(e.target.value);
              if (value !== null && Number.isFinite(value) && value > 0) {
                onChange({ ...scenario, capacityBps: value * MBIT });
              }
            }}
            onKeyDown={(e) => {
              if (e.key === 'Enter') (e.target as HTMLInputElement).blur();
            }}
          />
      </Field>
      <Field label={`Scale every rate limit: × ${scenario.rateScale.toFixed(2)}`} hint="Bursts scale with the rates (burst = rate × burst limit).">
        <input
          type="range"
          min={0.25}
          max={3}
          step={0.05}
          value={scenario.rateScale}
          onChange={(e) => onChange({ ...scenario, rateScale: Number(e.target.value) })}
        />
      </Field>
      {doc.slices.length > 0 && (
        <fieldset>
          <legend>Priorities</legend>
          <div className="form-grid">
            {doc.slices.map((s) => (
              <Field key={s.name} label={s.name}>
                <select
                  value={String(scenario.priorities[s.name] ?? s.priority)}
                  onChange={(e) => {
                    const next = { ...scenario.priorities };
                    const value = Number(e.target.value);
                    if (value === s.priority) delete next[s.name];
                    else next[s.name] = value;
                    onChange({ ...scenario, priorities: next });
                  }}
                >
                  {SLICE_PRIORITIES.map((p) => (
                    <option key={p} value={String(p)}>
                      {p}
                      {p === s.priority ? ' (now)' : ''}
                    </option>
                  ))}
                </select>
              </Field>
            ))}
          </div>
        </fieldset>
      )}
      <div>
        <Button size="sm" onClick={() => onChange(baseScenario(capacityBps))} disabled={isBase(scenario, capacityBps)}>
          Reset to the link as it is
        </Button>
      </div>
    </div>
  );
}
