/**
 * What the report covers (the network, a switch or a link) and its parameters: monthly growth
 * of every rate, the horizon, and how far back measured figures go. The scope and the window
 * apply at once; the numbers when submitted.
 */
import { useState, type FormEvent } from 'react';

import { useLinks } from '@/api/get-links';
import { useSwitches } from '@/api/get-switches';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { UnitInput } from '@/components/ui/unit-input';
import { inputText, parseDecimal } from '@/lib/units';

import type { ReportScope } from '../api/get-report';

import { LIMITS, TELEMETRY_WINDOWS, type ReportSettings } from './report-settings';

function scopeValue(scope: ReportScope): string {
  return scope.kind === 'network' ? 'network' : `${scope.kind}:${scope.id}`;
}

function scopeFromValue(value: string): ReportScope {
  const [kind, id] = value.split(':');
  return (kind === 'switch' || kind === 'link') && id ? { kind, id: Number(id) } : { kind: 'network' };
}

function growthError(value: number | null): string | undefined {
  if (value === null || !Number.isFinite(value)) return 'Enter a number, e.g. 5';
  if (value < 0 || value > LIMITS.growthPercent) return `From 0 to ${LIMITS.growthPercent} %`;
  return undefined;
}

function horizonError(value: number | null): string | undefined {
  if (value === null || !Number.isInteger(value) || value < 1 || value > LIMITS.horizonMonths) {
    return `Whole months from 1 to ${LIMITS.horizonMonths}`;
  }
  return undefined;
}

export function ReportControls({ settings, onChange }: { settings: ReportSettings; onChange: (next: ReportSettings) => void }) {
  const switches = useSwitches();
  const links = useLinks();
  const [growth, setGrowth] = useState(inputText(settings.parameters.growth_percent));
  const [horizon, setHorizon] = useState(inputText(settings.parameters.horizon_months));
  const [submitted, setSubmitted] = useState(false);
  const growthValue = parseDecimal(growth);
  const horizonValue = parseDecimal(horizon);
  const errors = { growth: growthError(growthValue), horizon: horizonError(horizonValue) };

  const switchName = new Map((switches.data?.data ?? []).map((s) => [s.id, s.name] as const));
  const scope = scopeValue(settings.scope);
  const known = [
    'network',
    ...(switches.data?.data ?? []).map((s) => `switch:${s.id}`),
    ...(links.data?.data ?? []).map((l) => `link:${l.id}`),
  ];

  // The numbers typed so far, where valid: a scope or window change keeps them.
  const typed = {
    ...(errors.growth || growthValue === null ? {} : { growth_percent: growthValue }),
    ...(errors.horizon || horizonValue === null ? {} : { horizon_months: horizonValue }),
  };
  const apply = (next: Partial<ReportSettings['parameters']>, scope = settings.scope) =>
    onChange({ scope, parameters: { ...settings.parameters, ...typed, ...next } });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSubmitted(true);
    if (!errors.growth && !errors.horizon) apply({});
  };

  return (
    <form className="toolbar report-controls no-print" aria-label="Report settings" onSubmit={submit} noValidate>
      <Field label="Scope" className="grow">
        <select value={scope} onChange={(e) => apply({}, scopeFromValue(e.target.value))}>
          <option value="network">Whole network</option>
          {!known.includes(scope) && <option value={scope}>{`${settings.scope.kind} ${scope.split(':')[1] ?? ''}`}</option>}
          {(switches.data?.data.length ?? 0) > 0 && (
            <optgroup label="Switches">
              {(switches.data?.data ?? []).map((s) => (
                <option key={s.id} value={`switch:${s.id}`}>
                  {s.name}
                </option>
              ))}
            </optgroup>
          )}
          {(links.data?.data.length ?? 0) > 0 && (
            <optgroup label="Links">
              {(links.data?.data ?? []).map((l) => (
                <option key={l.id} value={`link:${l.id}`}>
                  {`${switchName.get(l.switch_id) ?? `switch ${l.switch_id}`} / ${l.name}`}
                </option>
              ))}
            </optgroup>
          )}
        </select>
      </Field>
      <Field label="Growth" error={submitted ? errors.growth : undefined}>
        <UnitInput unit="%/month" value={growth} onChange={(e) => setGrowth(e.target.value)} />
      </Field>
      <Field label="Horizon" error={submitted ? errors.horizon : undefined}>
        <UnitInput unit="months" inputMode="numeric" value={horizon} onChange={(e) => setHorizon(e.target.value)} />
      </Field>
      <Field label="Telemetry">
        <select
          value={String(settings.parameters.telemetry_window_s)}
          onChange={(e) => apply({ telemetry_window_s: Number(e.target.value) })}
        >
          {TELEMETRY_WINDOWS.map((w) => (
            <option key={w.value} value={String(w.value)}>
              {w.label}
            </option>
          ))}
          {!TELEMETRY_WINDOWS.some((w) => w.value === settings.parameters.telemetry_window_s) && (
            <option value={String(settings.parameters.telemetry_window_s)}>{`Last ${settings.parameters.telemetry_window_s} s`}</option>
          )}
        </select>
      </Field>
      <Button type="submit" variant="primary">
        Update report
      </Button>
    </form>
  );
}
