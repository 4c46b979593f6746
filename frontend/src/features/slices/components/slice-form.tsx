/**
 * Create or edit a slice. Validation mirrors the API's (see slice-form-model.ts); the panel
 * beside the form shows the slice's effect on every link it crosses while the operator types,
 * and a 409 admission rejection shows why, with the API's fixes applicable in one click.
 */
import { useMemo, useRef, useState, type FormEvent } from 'react';

import { useLinks } from '@/api/get-links';
import { useSwitches } from '@/api/get-switches';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/notice';
import { QueryErrorState, StateView } from '@/components/ui/states';
import { UnitInput } from '@/components/ui/unit-input';
import { SLICE_PRIORITIES } from '@/lib/analysis';
import type { AbcKey, QueueScheme, SlicePublic } from '@/lib/api/schema';
import { formatRate } from '@/lib/format';
import { ApiError, errorMessage, fieldErrors } from '@/lib/problem';
import { MBIT, MS, inputText, parseDecimal } from '@/lib/units';
import { useDebouncedValue } from '@/lib/use-debounced-value';
import { useStableValue } from '@/lib/use-stable-value';

import { useCreateSlice } from '../api/create-slice';
import { useUpdateSlice } from '../api/update-slice';

import { RejectionPanel } from './rejection-panel';
import { SliceEffects } from './slice-effects';
import {
  ABC_DEFAULTS,
  ABC_PAPER_PACKETS,
  EMPTY_VALUES,
  abcThresholdDefaults,
  candidateDoc,
  createBody,
  updateBody,
  validateSlice,
  valuesFromSlice,
  type SliceFormValues,
} from './slice-form-model';

const SCHEMES: { value: QueueScheme; label: string }[] = [
  { value: 'tail_drop', label: 'Tail drop' },
  { value: 'ecn_step', label: 'ECN step marking' },
  { value: 'meter', label: 'meter (P4 meter baseline: rate and burst only, no delay control)' },
  { value: 'codel', label: 'CoDel (drops or marks to hold the queuing delay near a target)' },
  { value: 'abc', label: 'ABC (activity-based: drops the packets of the busiest sources first)' },
];

const ABC_KEYS: { value: AbcKey; label: string }[] = [
  { value: 'source_address', label: 'Source address' },
  { value: 'source_prefix', label: 'Source prefix' },
];

/** ABC's default thresholds at the rate and burst limit typed so far, as the placeholders of
 * the empty threshold inputs (in ms); empty while those two are not numbers yet. */
function abcPlaceholders(values: SliceFormValues): { qMin: string; qBase: string; gamma: string } {
  const rate = parseDecimal(values.rateMbps);
  const burst = parseDecimal(values.burstLimitMs);
  if (rate === null || burst === null || !(rate > 0) || !(burst > 0)) return { qMin: '', qBase: '', gamma: '' };
  const given = (text: string) => {
    const value = parseDecimal(text);
    return value === null || Number.isNaN(value) ? null : value * MS;
  };
  const found = abcThresholdDefaults(rate * MBIT, burst * MS, {
    qMin: given(values.abcQMinMs),
    qBase: given(values.abcQBaseMs),
  });
  const ms = (seconds: number) => inputText(Number((seconds / MS).toPrecision(4)));
  return { qMin: ms(found.qMin), qBase: ms(found.qBase), gamma: ms(found.gamma) };
}

export function SliceForm({
  initial,
  canAct,
  onSaved,
  onCancel,
}: {
  initial?: SlicePublic;
  canAct: boolean;
  onSaved: (slice: SlicePublic, created: boolean) => void;
  onCancel: () => void;
}) {
  const editing = initial !== undefined;
  const [values, setValues] = useState<SliceFormValues>(() =>
    initial ? valuesFromSlice(initial) : { ...EMPTY_VALUES },
  );
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [showAll, setShowAll] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [rejection, setRejection] = useState<ApiError | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const rejectionRef = useRef<HTMLDivElement>(null);
  const create = useCreateSlice();
  const update = useUpdateSlice();
  const links = useLinks();
  const switches = useSwitches();

  const validation = validateSlice(values);
  const errorFor = (key: string, ...inputs: string[]) => {
    if (serverErrors[key]) return serverErrors[key];
    const visible = showAll || inputs.some((i) => touched.has(i)) || touched.has(key);
    return visible ? validation.errors[key] : undefined;
  };

  const set = <K extends keyof SliceFormValues>(key: K, value: SliceFormValues[K]) => {
    setValues((v) => ({ ...v, [key]: value }));
    setServerErrors({});
  };
  const touch = (key: string) => () => setTouched((t) => new Set(t).add(key));

  const candidate = useStableValue(candidateDoc(values, 'new slice'));
  const debouncedCandidate = useDebouncedValue(candidate, 250);
  const linkIds = useStableValue([...values.linkIds].sort((a, b) => a - b));

  const switchNames = useMemo(
    () => new Map((switches.data?.data ?? []).map((s) => [s.id, s.name] as const)),
    [switches.data],
  );

  async function submit(priorityOverride?: number) {
    const current =
      priorityOverride === undefined ? values : { ...values, priority: String(priorityOverride) };
    if (priorityOverride !== undefined) setValues(current);
    const checked = validateSlice(current);
    if (!checked.parsed) {
      setShowAll(true);
      window.setTimeout(() => {
        formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
      });
      return;
    }
    setFormError(null);
    setRejection(null);
    try {
      const saved = editing
        ? await update.mutateAsync({ sliceId: initial.id, body: updateBody(checked.parsed) })
        : await create.mutateAsync(createBody(checked.parsed));
      onSaved(saved, !editing);
    } catch (error) {
      if (error instanceof ApiError && error.isAdmissionRejected) {
        setRejection(error);
        window.setTimeout(() => rejectionRef.current?.scrollIntoView({ block: 'center' }));
        return;
      }
      const fields = fieldErrors(error);
      setServerErrors(fields);
      setShowAll(true);
      setFormError(
        Object.keys(fields).length
          ? `The API refused the slice: ${errorMessage(error)}`
          : errorMessage(error),
      );
    }
  }

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    void submit();
  };

  const pending = create.isPending || update.isPending;

  return (
    <div className="split">
      <Card title={editing ? `Edit ${initial.name}` : 'New slice'} subtitle="Fields marked * are required.">
        <form ref={formRef} className="form" onSubmit={onSubmit} noValidate aria-label="Slice">
          {formError && (
            <Notice tone="bad" title="Not saved">
              {formError}
            </Notice>
          )}
          <div className="form-grid">
            <Field label="Name" required error={errorFor('name')}>
              <input
                type="text"
                value={values.name}
                onChange={(e) => set('name', e.target.value)}
                onBlur={touch('name')}
                autoComplete="off"
                autoFocus={!editing}
              />
            </Field>
            <Field
              label="Priority"
              required
              error={errorFor('priority')}
              hint="7 is the highest (strict priority); 0 is best effort's (unclassified traffic)."
            >
              <select value={values.priority} onChange={(e) => set('priority', e.target.value)} onBlur={touch('priority')}>
                {SLICE_PRIORITIES.map((p) => (
                  <option key={p} value={String(p)}>
                    {p}
                    {p === 7 ? ' (highest)' : p === 1 ? ' (lowest, above best effort)' : ''}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Description" error={errorFor('description')} className="span-2">
              <input type="text" value={values.description} onChange={(e) => set('description', e.target.value)} onBlur={touch('description')} />
            </Field>
          </div>

          <fieldset>
            <legend>Traffic contract</legend>
            <div className="form-grid-3">
              <Field label="Rate limit" required error={errorFor('rate_bps', 'rateMbps')} hint="L, the virtual queue's rate.">
                <UnitInput unit="Mbit/s" value={values.rateMbps} onChange={(e) => set('rateMbps', e.target.value)} onBlur={touch('rateMbps')} />
              </Field>
              <Field label="Burst limit" required error={errorFor('burst_limit_s', 'burstLimitMs')} hint="Burst b = L × this.">
                <UnitInput unit="ms" value={values.burstLimitMs} onChange={(e) => set('burstLimitMs', e.target.value)} onBlur={touch('burstLimitMs')} />
              </Field>
              <Field label="Delay target" error={errorFor('delay_target_s', 'delayTargetMs')} hint="Default: the burst limit.">
                <UnitInput unit="ms" value={values.delayTargetMs} onChange={(e) => set('delayTargetMs', e.target.value)} onBlur={touch('delayTargetMs')} placeholder={values.burstLimitMs} />
              </Field>
              <Field
                label="End-to-end delay target"
                error={errorFor('e2e_delay_target_s', 'e2eDelayTargetMs')}
                hint="Optional: bounds the worst-case delays over every link crossed plus the cables' propagation."
              >
                <UnitInput unit="ms" value={values.e2eDelayTargetMs} onChange={(e) => set('e2eDelayTargetMs', e.target.value)} onBlur={touch('e2eDelayTargetMs')} />
              </Field>
              <Field label="Queue scheme" error={errorFor('scheme')}>
                <select value={values.scheme} onChange={(e) => set('scheme', e.target.value as QueueScheme)}>
                  {SCHEMES.map((s) => (
                    <option key={s.value} value={s.value}>
                      {s.label}
                    </option>
                  ))}
                </select>
              </Field>
              {values.scheme === 'ecn_step' && (
                <Field label="Marking threshold" required error={errorFor('marking_threshold_s', 'markingThresholdMs')} hint="At most the burst limit.">
                  <UnitInput unit="ms" value={values.markingThresholdMs} onChange={(e) => set('markingThresholdMs', e.target.value)} onBlur={touch('markingThresholdMs')} />
                </Field>
              )}
              {values.scheme === 'codel' && (
                <>
                  <Field
                    label="CoDel target"
                    required
                    error={errorFor('codel.target_s', 'codelTargetMs')}
                    hint="The queuing delay CoDel holds the slice to; below the burst limit, at most the delay target. Default 5 ms."
                  >
                    <UnitInput unit="ms" value={values.codelTargetMs} onChange={(e) => set('codelTargetMs', e.target.value)} onBlur={touch('codelTargetMs')} />
                  </Field>
                  <Field
                    label="CoDel interval"
                    required
                    error={errorFor('codel.interval_s', 'codelIntervalMs')}
                    hint="How long the delay may stay above the target before CoDel acts; then the spacing of its drops, shrinking as they repeat. Default 100 ms."
                  >
                    <UnitInput unit="ms" value={values.codelIntervalMs} onChange={(e) => set('codelIntervalMs', e.target.value)} onBlur={touch('codelIntervalMs')} />
                  </Field>
                  <Field
                    label="Mark instead of dropping"
                    error={errorFor('codel.ecn_mark')}
                    hint="Mark ECN-capable packets CE instead of dropping them; others are still dropped. Default off."
                  >
                    <input type="checkbox" checked={values.codelEcnMark} onChange={(e) => set('codelEcnMark', e.target.checked)} />
                  </Field>
                </>
              )}
              {values.scheme === 'abc' && (
                <AbcFields values={values} set={set} touch={touch} errorFor={errorFor} />
              )}
              <Field label="Max packet" error={errorFor('max_packet_bytes', 'maxPacketBytes')} hint="Default: the link MTU.">
                <UnitInput unit="bytes" inputMode="numeric" value={values.maxPacketBytes} onChange={(e) => set('maxPacketBytes', e.target.value)} onBlur={touch('maxPacketBytes')} />
              </Field>
            </div>
          </fieldset>

          <fieldset>
            <legend>Match</legend>
            <div className="form-grid">
              <Field label="VLAN id" error={errorFor('vlan_id', 'vlanId')} hint="1–4094; a VLAN id or prefixes are required.">
                <input type="text" inputMode="numeric" value={values.vlanId} onChange={(e) => set('vlanId', e.target.value)} onBlur={touch('vlanId')} />
              </Field>
              <Field label="IPv4 destination prefixes" error={errorFor('ipv4_prefixes', 'prefixes')} hint="One per line or comma-separated, e.g. 10.1.0.0/16.">
                <textarea rows={2} value={values.prefixes} onChange={(e) => set('prefixes', e.target.value)} onBlur={touch('prefixes')} />
              </Field>
            </div>
          </fieldset>

          <fieldset>
            <legend>Links crossed</legend>
            {links.isPending ? (
              <StateView kind="loading" compact title="Loading links…" />
            ) : links.isError ? (
              <QueryErrorState compact error={links.error} what="links" onRetry={() => void links.refetch()} />
            ) : links.data.data.length === 0 ? (
              <StateView kind="empty" compact title="No link exists yet" detail="Add a switch and a link under Switches first." />
            ) : (
              <Field label="Links" required error={errorFor('link_ids', 'linkIds')}>
                <div className="checkbox-list" role="group">
                  {links.data.data.map((link) => (
                    <label key={link.id}>
                      <input
                        type="checkbox"
                        checked={values.linkIds.includes(link.id)}
                        onChange={(e) => {
                          set(
                            'linkIds',
                            e.target.checked
                              ? [...values.linkIds, link.id]
                              : values.linkIds.filter((id) => id !== link.id),
                          );
                          touch('linkIds')();
                        }}
                      />
                      <span>
                        {link.name}{' '}
                        <span className="muted small">
                          {switchNames.get(link.switch_id) ?? `switch ${link.switch_id}`} port {link.port} ·{' '}
                          {formatRate(link.capacity_bps)}
                        </span>
                      </span>
                    </label>
                  ))}
                </div>
              </Field>
            )}
          </fieldset>

          <fieldset>
            <legend>SLA (alerts)</legend>
            <div className="form-grid">
              <Field label="Max queuing delay" error={errorFor('sla.max_delay_s', 'slaMaxDelayMs')}>
                <UnitInput unit="ms" value={values.slaMaxDelayMs} onChange={(e) => set('slaMaxDelayMs', e.target.value)} onBlur={touch('slaMaxDelayMs')} />
              </Field>
              <Field label="Min throughput" error={errorFor('sla.min_throughput_bps', 'slaMinThroughputMbps')}>
                <UnitInput unit="Mbit/s" value={values.slaMinThroughputMbps} onChange={(e) => set('slaMinThroughputMbps', e.target.value)} onBlur={touch('slaMinThroughputMbps')} />
              </Field>
              <Field label="Max loss ratio" error={errorFor('sla.max_loss_ratio', 'slaMaxLossPercent')}>
                <UnitInput unit="%" value={values.slaMaxLossPercent} onChange={(e) => set('slaMaxLossPercent', e.target.value)} onBlur={touch('slaMaxLossPercent')} />
              </Field>
              <Field label="Max ECN mark ratio" error={errorFor('sla.max_mark_ratio', 'slaMaxMarkPercent')}>
                <UnitInput unit="%" value={values.slaMaxMarkPercent} onChange={(e) => set('slaMaxMarkPercent', e.target.value)} onBlur={touch('slaMaxMarkPercent')} />
              </Field>
            </div>
          </fieldset>

          <div ref={rejectionRef}>
            {rejection && (
              <RejectionPanel
                error={rejection}
                sliceName={values.name.trim()}
                {...(editing ? { excludeSliceId: initial.id } : {})}
                canAct={canAct}
                onRetry={({ priority }) => submit(priority)}
              />
            )}
          </div>

          <div className="form-actions">
            <Button type="submit" variant="primary" busy={pending} disabled={!canAct}>
              {editing ? 'Save changes' : 'Create slice'}
            </Button>
            <Button onClick={onCancel}>Cancel</Button>
            {!canAct && <span className="muted">Your role may not change slices.</span>}
          </div>
        </form>
      </Card>
      <div className="sticky">
        <Card
          title="Effect on the links"
          subtitle="Worst-case queuing delay of every slice on each link, computed by the API as you type."
        >
          <SliceEffects
            candidate={debouncedCandidate}
            linkIds={linkIds}
            {...(editing ? { excludeSliceId: initial.id } : {})}
            canAct={canAct}
            onUsePriority={(p) => set('priority', String(p))}
          />
        </Card>
      </div>
    </div>
  );
}

/** ABC's parameters: memories, reference rate, the drop threshold's three figures (empty: the
 * paper's default at the slice's rate, shown as the placeholder) and what an aggregate is. */
function AbcFields({
  values,
  set,
  touch,
  errorFor,
}: {
  values: SliceFormValues;
  set: <K extends keyof SliceFormValues>(key: K, value: SliceFormValues[K]) => void;
  touch: (key: string) => () => void;
  errorFor: (key: string, ...inputs: string[]) => string | undefined;
}) {
  const defaults = abcPlaceholders(values);
  const packets = (n: number) => `Default: ${n} full-size packets' time at the rate`;
  return (
    <>
      <Field
        label="Meter memory"
        required
        error={errorFor('abc.meter_memory_s', 'abcMeterMemoryS')}
        hint={`How long each source's rate meter remembers: longer smooths its rate over more time. Default ${ABC_DEFAULTS.meterMemoryS} s.`}
      >
        <UnitInput unit="s" value={values.abcMeterMemoryS} onChange={(e) => set('abcMeterMemoryS', e.target.value)} onBlur={touch('abcMeterMemoryS')} />
      </Field>
      <Field
        label="Average memory"
        required
        error={errorFor('abc.average_memory_s', 'abcAverageMemoryS')}
        hint={`How long the slice's average activity remembers; each packet's activity is compared with it. Default ${ABC_DEFAULTS.averageMemoryS} s.`}
      >
        <UnitInput unit="s" value={values.abcAverageMemoryS} onChange={(e) => set('abcAverageMemoryS', e.target.value)} onBlur={touch('abcAverageMemoryS')} />
      </Field>
      <Field
        label="Reference rate"
        required
        error={errorFor('abc.reference_rate_bps', 'abcReferenceRateKbps')}
        hint={`The rate of activity 0: a source at twice this rate has activity 1, at half of it −1. Default ${ABC_DEFAULTS.referenceRateKbps} kbit/s.`}
      >
        <UnitInput unit="kbit/s" value={values.abcReferenceRateKbps} onChange={(e) => set('abcReferenceRateKbps', e.target.value)} onBlur={touch('abcReferenceRateKbps')} />
      </Field>
      <Field
        label="Q_min"
        error={errorFor('abc.q_min_s', 'abcQMinMs')}
        hint={`Queuing delay below which nothing is dropped, however active the source. ${packets(ABC_PAPER_PACKETS.qMin)}, at most the burst limit.`}
      >
        <UnitInput unit="ms" value={values.abcQMinMs} placeholder={defaults.qMin} onChange={(e) => set('abcQMinMs', e.target.value)} onBlur={touch('abcQMinMs')} />
      </Field>
      <Field
        label="Q_base"
        error={errorFor('abc.q_base_s', 'abcQBaseMs')}
        hint={`Queuing delay at which a packet of average activity is dropped. ${packets(ABC_PAPER_PACKETS.qBase)}, at most the burst limit.`}
      >
        <UnitInput unit="ms" value={values.abcQBaseMs} placeholder={defaults.qBase} onChange={(e) => set('abcQBaseMs', e.target.value)} onBlur={touch('abcQBaseMs')} />
      </Field>
      <Field
        label="Gamma"
        error={errorFor('abc.gamma_s', 'abcGammaMs')}
        hint={`How far the drop threshold falls per unit of activity above the average (and rises below it). ${packets(ABC_PAPER_PACKETS.gamma)}.`}
      >
        <UnitInput unit="ms" value={values.abcGammaMs} placeholder={defaults.gamma} onChange={(e) => set('abcGammaMs', e.target.value)} onBlur={touch('abcGammaMs')} />
      </Field>
      <Field
        label="Aggregates"
        error={errorFor('abc.key')}
        hint="What ABC shares the slice fairly among: each source address, or each source prefix. Default: source address."
      >
        <select value={values.abcKey} onChange={(e) => set('abcKey', e.target.value as AbcKey)}>
          {ABC_KEYS.map((k) => (
            <option key={k.value} value={k.value}>
              {k.label}
            </option>
          ))}
        </select>
      </Field>
      {values.abcKey === 'source_prefix' && (
        <Field
          label="Source prefix length"
          required
          error={errorFor('abc.prefix_length', 'abcPrefixLength')}
          hint="The length of the source prefix one aggregate covers, 0 to 32 (24: one per /24)."
        >
          <UnitInput unit="bits" inputMode="numeric" value={values.abcPrefixLength} onChange={(e) => set('abcPrefixLength', e.target.value)} onBlur={touch('abcPrefixLength')} />
        </Field>
      )}
      <p className="muted small span-3">
        A switch holds ABC&apos;s decay rows for at most 16 distinct meter memories and 16 average memories: reuse the
        memories of the switch&apos;s other ABC slices where you can.
      </p>
    </>
  );
}
