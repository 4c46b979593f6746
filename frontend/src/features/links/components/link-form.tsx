import { useState, type FormEvent } from 'react';

import { useSwitches } from '@/api/get-switches';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/notice';
import { UnitInput } from '@/components/ui/unit-input';
import { BMV2_DROP_PORT } from '@/config/p4-constants';
import { DEFAULT_MODEL, FRAME_OVERHEADS, MODELS, MODEL_HINTS, MODEL_LABELS } from '@/lib/analysis';
import type { LinkPublic, Model } from '@/lib/api/schema';
import { formatDelay } from '@/lib/format';
import { checkPrefix, splitPrefixes } from '@/lib/ipv4';
import { ApiError, errorMessage, fieldErrors } from '@/lib/problem';
import { MBIT, inputText, parseDecimal } from '@/lib/units';

import { useCreateLink } from '../api/create-link';
import { useUpdateLink } from '../api/update-link';

const NAME = /^[A-Za-z0-9][A-Za-z0-9 _.:/@+-]*$/;

interface Values {
  switchId: string;
  name: string;
  description: string;
  port: string;
  capacityMbps: string;
  queueCount: string;
  model: Model | '';
  mtu: string;
  frameOverhead: string;
  hostPrefixes: string;
  hostVlans: string;
}

/** VLAN ids hosts may sit on (`domain.spec`: 0 and 4095 are reserved). */
export const VLAN_LIMITS = { min: 1, max: 4094 } as const;

/** The VLANs typed into a list (spaces, commas or semicolons between them), or the reason they
 * are not VLANs, each once, from 1 to 4094. */
export function parseVlans(text: string): number[] | string {
  const vlans: number[] = [];
  for (const item of splitPrefixes(text)) {
    const vlan = Number(item);
    if (!Number.isInteger(vlan) || vlan < VLAN_LIMITS.min || vlan > VLAN_LIMITS.max) return `${item} is not a VLAN from ${VLAN_LIMITS.min} to ${VLAN_LIMITS.max}`;
    if (vlans.includes(vlan)) return `VLAN ${vlan} is listed twice`;
    vlans.push(vlan);
  }
  return vlans.sort((a, b) => a - b);
}

/** A link's queues: best effort keeps one, its slices the others (`links.queue_count`). */
export const QUEUE_LIMITS = { min: 2, max: 8 } as const;
/** The API's limits (`domain.spec`): capacities the analytics take, an IPv4 packet's MTU. A unit
 * test checks them against the OpenAPI document. */
export const LINK_LIMITS = { capacityMinBps: 1, capacityMaxBps: 1e15, mtuMin: 64, mtuMax: 65535, portMax: BMV2_DROP_PORT - 1 } as const;

export function validateLink(v: Values, creating: boolean): Record<string, string> {
  const e: Record<string, string> = {};
  if (creating && !v.switchId) e.switch_id = 'Choose the switch.';
  if (!v.name.trim()) e.name = 'Required.';
  else if (v.name.trim().length > 64 || !NAME.test(v.name.trim())) e.name = 'Up to 64 letters, digits, space and _ . : / @ + -, starting with a letter or digit.';
  const port = parseDecimal(v.port);
  if (port === null) e.port = 'Required.';
  else if (!Number.isInteger(port) || port < 0 || port > LINK_LIMITS.portMax) e.port = `A whole number from 0 to ${LINK_LIMITS.portMax} (${BMV2_DROP_PORT} is BMv2's drop port).`;
  const capacity = parseDecimal(v.capacityMbps);
  if (capacity === null) e.capacity_bps = 'Required.';
  else if (!Number.isFinite(capacity) || capacity * MBIT < LINK_LIMITS.capacityMinBps || capacity * MBIT > LINK_LIMITS.capacityMaxBps) {
    e.capacity_bps = 'From 0.000001 Mbit/s (1 bit/s) to 1,000,000,000 Mbit/s (1 Pbit/s).';
  }
  const queues = parseDecimal(v.queueCount);
  if (queues === null || !Number.isInteger(queues) || queues < QUEUE_LIMITS.min || queues > QUEUE_LIMITS.max) {
    e.queue_count = `A whole number from ${QUEUE_LIMITS.min} to ${QUEUE_LIMITS.max} (best effort keeps one).`;
  }
  const overhead = parseDecimal(v.frameOverhead);
  if (overhead === null || !Number.isInteger(overhead) || overhead < 0 || overhead > 64) {
    e.frame_overhead_bytes = 'Choose what the capacity counts.';
  }
  const mtu = parseDecimal(v.mtu);
  if (mtu !== null && (!Number.isInteger(mtu) || mtu < LINK_LIMITS.mtuMin || mtu > LINK_LIMITS.mtuMax)) {
    e.mtu_bytes = `A whole number from ${LINK_LIMITS.mtuMin} to ${LINK_LIMITS.mtuMax}.`;
  }
  const prefixes = splitPrefixes(v.hostPrefixes);
  const badPrefix = prefixes.map(checkPrefix).find((reason) => reason !== null);
  if (badPrefix) e.host_ipv4_prefixes = badPrefix;
  else if (new Set(prefixes).size !== prefixes.length) e.host_ipv4_prefixes = 'A prefix is listed twice.';
  const vlans = parseVlans(v.hostVlans);
  if (typeof vlans === 'string') e.host_vlan_ids = vlans;
  return e;
}

export function LinkForm({
  link,
  switchId,
  onDone,
  onCancel,
}: {
  link?: LinkPublic;
  switchId?: number;
  onDone: (link: LinkPublic) => void;
  onCancel: () => void;
}) {
  const creating = link === undefined;
  const switches = useSwitches();
  const [values, setValues] = useState<Values>({
    switchId: String(link?.switch_id ?? switchId ?? ''),
    name: link?.name ?? '',
    description: link?.description ?? '',
    port: link ? String(link.port) : '',
    capacityMbps: link ? inputText(link.capacity_bps / MBIT) : '',
    queueCount: String(link?.queue_count ?? 8),
    model: link?.model ?? '',
    mtu: link ? String(link.mtu_bytes) : '',
    frameOverhead: String(link?.frame_overhead_bytes ?? 0),
    hostPrefixes: (link?.host_ipv4_prefixes ?? []).join(' '),
    hostVlans: (link?.host_vlan_ids ?? []).join(' '),
  });
  const facesHosts = link?.cable_id == null;
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(null);
  const create = useCreateLink();
  const update = useUpdateLink();
  const errors = { ...(submitted ? validateLink(values, creating) : {}), ...serverErrors };
  const set = (key: keyof Values) => (e: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [key]: e.target.value }));
    setServerErrors({});
  };

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    setFailure(null);
    if (Object.keys(validateLink(values, creating)).length) return;
    const common = {
      name: values.name.trim(),
      description: values.description.trim(),
      port: Number(values.port),
      capacity_bps: (parseDecimal(values.capacityMbps) ?? 0) * MBIT,
      queue_count: Number(values.queueCount),
      frame_overhead_bytes: Number(values.frameOverhead),
      ...(values.model ? { model: values.model } : {}),
      ...(values.mtu.trim() ? { mtu_bytes: Number(values.mtu) } : {}),
      ...(facesHosts ? { host_ipv4_prefixes: splitPrefixes(values.hostPrefixes), host_vlan_ids: parseVlans(values.hostVlans) as number[] } : {}),
    };
    try {
      const saved = creating
        ? await create.mutateAsync({ ...common, switch_id: Number(values.switchId) })
        : await update.mutateAsync({ linkId: link.id, body: common });
      onDone(saved);
    } catch (error) {
      setServerErrors(fieldErrors(error));
      setFailure(error);
    }
  }

  const violations = failure instanceof ApiError ? (failure.problem.violations ?? []) : [];
  return (
    <form className="form" onSubmit={(e) => void onSubmit(e)} noValidate aria-label={creating ? 'New link' : `Edit link ${link.name}`}>
      {failure !== null && (
        <Notice tone="bad" title="Not saved">
          {errorMessage(failure)}
          {violations.length > 0 && (
            <ul style={{ margin: '4px 0 0', paddingLeft: 18 }}>
              {violations.map((v) => (
                <li key={v.slice}>
                  {v.slice}: {v.reason} (bound {formatDelay(v.bound_s)})
                </li>
              ))}
            </ul>
          )}
        </Notice>
      )}
      <div className="form-grid">
        {creating && switchId === undefined && (
          <Field label="Switch" required error={errors.switch_id}>
            <select value={values.switchId} onChange={set('switchId')}>
              <option value="">Choose…</option>
              {(switches.data?.data ?? []).map((s) => (
                <option key={s.id} value={String(s.id)}>
                  {s.name}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field label="Name" required error={errors.name}>
          <input type="text" value={values.name} onChange={set('name')} />
        </Field>
        <Field label="Egress port" required error={errors.port} hint={`0–${LINK_LIMITS.portMax} (${BMV2_DROP_PORT} is BMv2's drop port).`}>
          <input type="text" inputMode="numeric" value={values.port} onChange={set('port')} />
        </Field>
        <Field label="Capacity" required error={errors.capacity_bps}>
          <UnitInput unit="Mbit/s" value={values.capacityMbps} onChange={set('capacityMbps')} />
        </Field>
        <Field
          label="Priority queues"
          required
          error={errors.queue_count}
          hint="2 to 8, one of them best effort's (priority 0): slices use the others. BMv2: 8 with --priority-queues 8."
        >
          <input type="text" inputMode="numeric" value={values.queueCount} onChange={set('queueCount')} />
        </Field>
        <Field
          label="Capacity counts"
          required
          error={errors.frame_overhead_bytes}
          hint="Frame bytes: as the data plane counts them (Ethernet header, VLAN tag, IP packet). Line rate: also each frame's preamble, FCS and inter-frame gap (24 bytes)."
        >
          <select value={values.frameOverhead} onChange={set('frameOverhead')}>
            {FRAME_OVERHEADS.map((o) => (
              <option key={o.bytes} value={String(o.bytes)}>
                {o.label}
              </option>
            ))}
            {/* A link given another overhead through the API keeps it. */}
            {!FRAME_OVERHEADS.some((o) => String(o.bytes) === values.frameOverhead) && (
              <option value={values.frameOverhead}>{values.frameOverhead} bytes per frame</option>
            )}
          </select>
        </Field>
        <Field
          label="Delay model"
          error={errors.model}
          hint={values.model ? MODEL_HINTS[values.model] : `Default: the server's model (${MODEL_LABELS[DEFAULT_MODEL]}, unless configured otherwise).`}
        >
          <select value={values.model} onChange={set('model')}>
            {creating && <option value="">Server default</option>}
            {MODELS.map((m) => (
              <option key={m} value={m}>
                {MODEL_LABELS[m]}
              </option>
            ))}
          </select>
        </Field>
        <Field label="MTU" error={errors.mtu_bytes} hint="Default: the server's MTU setting.">
          <UnitInput unit="bytes" inputMode="numeric" value={values.mtu} onChange={set('mtu')} />
        </Field>
        {facesHosts && (
          <>
            <Field label="Host prefixes" error={errors.host_ipv4_prefixes} hint="IPv4 prefixes of the hosts behind this port, if it faces hosts (not a cable).">
              <input type="text" value={values.hostPrefixes} onChange={set('hostPrefixes')} />
            </Field>
            <Field label="Host VLANs" error={errors.host_vlan_ids} hint={`VLANs of those hosts, ${VLAN_LIMITS.min}–${VLAN_LIMITS.max}.`}>
              <input type="text" value={values.hostVlans} onChange={set('hostVlans')} />
            </Field>
          </>
        )}
        <Field label="Description" error={errors.description} className="span-2">
          <input type="text" value={values.description} onChange={set('description')} />
        </Field>
      </div>
      <div className="form-actions">
        <Button type="submit" variant="primary" busy={create.isPending || update.isPending}>
          {creating ? 'Add link' : 'Save link'}
        </Button>
        <Button onClick={onCancel}>Cancel</Button>
      </div>
    </form>
  );
}
