import { useState, type FormEvent } from 'react';

import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/notice';
import { UnitInput } from '@/components/ui/unit-input';
import type { CablePublic, Topology, TopologyCable } from '@/lib/api/schema';
import { errorMessage, fieldErrors } from '@/lib/problem';
import { MS, inputText, parseDecimal } from '@/lib/units';

import { useCreateCable } from '../api/create-cable';
import { useUpdateCable } from '../api/update-cable';

interface Values {
  name: string;
  aLinkId: string;
  bLinkId: string;
  propagationMs: string;
  description: string;
}

/** The API's largest propagation delay (`domain.spec.MAX_TIME_S`). */
export const MAX_PROPAGATION_S = 1e6;

export function validateCable(v: Values, creating: boolean): Record<string, string> {
  const e: Record<string, string> = {};
  if (!v.name.trim()) e.name = 'Required.';
  if (creating) {
    if (!v.aLinkId) e.a_link_id = 'Choose a port.';
    if (!v.bLinkId) e.b_link_id = 'Choose a port.';
    else if (v.bLinkId === v.aLinkId) e.b_link_id = 'A cable joins two ports.';
  }
  const propagation = parseDecimal(v.propagationMs);
  if (propagation === null || propagation < 0 || propagation * MS > MAX_PROPAGATION_S) e.propagation_s = 'Zero or more milliseconds.';
  return e;
}

/** Make a cable between two free ports (links that face nothing yet), or change one's name,
 * description and propagation delay (its ends stay: delete it to rewire). */
export function CableForm({
  topology,
  cable,
  onDone,
  onCancel,
}: {
  topology: Topology;
  cable?: TopologyCable;
  onDone: (cable: CablePublic) => void;
  onCancel: () => void;
}) {
  const creating = cable === undefined;
  const [values, setValues] = useState<Values>({
    name: cable?.name ?? '',
    aLinkId: '',
    bLinkId: '',
    propagationMs: inputText((cable?.propagation_s ?? 0) / MS),
    description: '',
  });
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(null);
  const create = useCreateCable();
  const update = useUpdateCable();
  const errors = { ...(submitted ? validateCable(values, creating) : {}), ...serverErrors };
  const set = (key: keyof Values) => (e: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [key]: e.target.value }));
    setServerErrors({});
  };
  const switchName = new Map(topology.switches.map((s) => [s.id, s.name] as const));
  const free = topology.links.filter((l) => l.cable_id === null && l.host_ipv4_prefixes.length === 0 && l.host_vlan_ids.length === 0);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    setFailure(null);
    if (Object.keys(validateCable(values, creating)).length) return;
    const common = { name: values.name.trim(), propagation_s: (parseDecimal(values.propagationMs) ?? 0) * MS };
    try {
      const saved = creating
        ? await create.mutateAsync({ ...common, description: values.description.trim(), a_link_id: Number(values.aLinkId), b_link_id: Number(values.bLinkId) })
        : await update.mutateAsync({ cableId: cable.id, body: common });
      onDone(saved);
    } catch (error) {
      setServerErrors(fieldErrors(error));
      setFailure(error);
    }
  }

  const portSelect = (key: 'aLinkId' | 'bLinkId') => (
    <select value={values[key]} onChange={set(key)}>
      <option value="">Choose…</option>
      {free.map((l) => (
        <option key={l.id} value={String(l.id)}>
          {switchName.get(l.switch_id) ?? `switch ${l.switch_id}`} · {l.name} (port {l.port})
        </option>
      ))}
    </select>
  );
  return (
    <form className="form" onSubmit={(e) => void onSubmit(e)} noValidate aria-label={creating ? 'New cable' : `Edit cable ${cable.name}`}>
      {failure !== null && <Notice tone="bad" title="Not saved">{errorMessage(failure)}</Notice>}
      <div className="form-grid">
        <Field label="Name" required error={errors.name}>
          <input type="text" value={values.name} onChange={set('name')} />
        </Field>
        <Field label="Propagation delay" required error={errors.propagation_s} hint="From one end to the other, the same both ways.">
          <UnitInput unit="ms" value={values.propagationMs} onChange={set('propagationMs')} />
        </Field>
        {creating && (
          <>
            <Field label="End A" required error={errors.a_link_id} hint="A link (egress port) that faces nothing yet: no cable, no hosts.">
              {portSelect('aLinkId')}
            </Field>
            <Field label="End B" required error={errors.b_link_id} hint="A port of another switch.">
              {portSelect('bLinkId')}
            </Field>
            <Field label="Description" error={errors.description} className="span-2">
              <input type="text" value={values.description} onChange={set('description')} />
            </Field>
          </>
        )}
      </div>
      <div className="form-actions">
        <Button type="submit" variant="primary" busy={create.isPending || update.isPending}>
          {creating ? 'Add cable' : 'Save cable'}
        </Button>
        <Button onClick={onCancel}>Cancel</Button>
      </div>
    </form>
  );
}
