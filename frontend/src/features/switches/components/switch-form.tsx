import { useState, type FormEvent } from 'react';

import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/notice';
import type { SwitchKind, SwitchPublic } from '@/lib/api/schema';
import { errorMessage, fieldErrors } from '@/lib/problem';

import { useCreateSwitch } from '../api/create-switch';
import { useUpdateSwitch } from '../api/update-switch';

const NAME = /^[A-Za-z0-9][A-Za-z0-9 _.:/@+-]*$/;
const HOST = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?)+$/;
const KINDS: { value: SwitchKind; label: string }[] = [
  { value: 'bmv2', label: 'BMv2 simple_switch_grpc' },
  { value: 'emulator', label: 'sliceportal emulator' },
  { value: 'tofino', label: 'Intel Tofino' },
  { value: 'other', label: 'Other' },
];

interface Values {
  name: string;
  description: string;
  address: string;
  deviceId: string;
  electionId: string;
  kind: SwitchKind;
  tlsCa: string;
  tlsCert: string;
  tlsKey: string;
}

/** A P4Runtime address as the API checks it: host:port, ipv4:port or [ipv6]:port. */
export function checkAddress(value: string): string | null {
  const at = value.lastIndexOf(':');
  if (at < 0) return 'Must be host:port.';
  const host = value.slice(0, at);
  const port = value.slice(at + 1);
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) return 'The port must be 1–65535.';
  if (host.startsWith('[') && host.endsWith(']')) return /^[0-9A-Fa-f:.]+$/.test(host.slice(1, -1)) ? null : `${host} is not an IPv6 address.`;
  return HOST.test(host) ? null : `'${host}' is not a host name or IPv4 address.`;
}

export function validateSwitch(v: Values): Record<string, string> {
  const e: Record<string, string> = {};
  const name = v.name.trim();
  if (!name) e.name = 'Required.';
  else if (name.length > 64 || !NAME.test(name)) e.name = 'Up to 64 letters, digits, space and _ . : / @ + -, starting with a letter or digit.';
  if (!v.address.trim()) e.address = 'Required.';
  else {
    const problem = checkAddress(v.address.trim());
    if (problem) e.address = problem;
  }
  if (!/^\d+$/.test(v.deviceId.trim())) e.device_id = 'A whole number ≥ 0.';
  if (!/^\d+$/.test(v.electionId.trim()) || Number(v.electionId) < 1) e.election_id = 'A whole number ≥ 1.';
  if (!!v.tlsCert.trim() !== !!v.tlsKey.trim()) e.tls_key_path = 'The certificate and the key go together.';
  return e;
}

export function SwitchForm({ sw, onDone, onCancel }: { sw?: SwitchPublic; onDone: (sw: SwitchPublic) => void; onCancel: () => void }) {
  const creating = sw === undefined;
  const [values, setValues] = useState<Values>({
    name: sw?.name ?? '',
    description: sw?.description ?? '',
    address: sw?.address ?? '',
    deviceId: String(sw?.device_id ?? 1),
    electionId: String(sw?.election_id ?? 1),
    kind: sw?.kind ?? 'bmv2',
    tlsCa: sw?.tls_ca_path ?? '',
    tlsCert: sw?.tls_cert_path ?? '',
    tlsKey: sw?.tls_key_path ?? '',
  });
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>(null);
  const create = useCreateSwitch();
  const update = useUpdateSwitch();
  const errors = { ...(submitted ? validateSwitch(values) : {}), ...serverErrors };
  const set = (key: keyof Values) => (e: { target: { value: string } }) => {
    setValues((v) => ({ ...v, [key]: e.target.value }));
    setServerErrors({});
  };

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    setFailure(null);
    if (Object.keys(validateSwitch(values)).length) return;
    const optional = (text: string) => (text.trim() ? text.trim() : null);
    const body = {
      name: values.name.trim(),
      description: values.description.trim(),
      address: values.address.trim(),
      device_id: Number(values.deviceId),
      election_id: Number(values.electionId),
      kind: values.kind,
      tls_ca_path: optional(values.tlsCa),
      tls_cert_path: optional(values.tlsCert),
      tls_key_path: optional(values.tlsKey),
    };
    try {
      const saved = creating ? await create.mutateAsync(body) : await update.mutateAsync({ switchId: sw.id, body });
      onDone(saved);
    } catch (error) {
      setServerErrors(fieldErrors(error));
      setFailure(error);
    }
  }

  return (
    <form className="form" onSubmit={(e) => void onSubmit(e)} noValidate aria-label={creating ? 'New switch' : `Edit switch ${sw.name}`}>
      {failure !== null && <Notice tone="bad" title="Not saved">{errorMessage(failure)}</Notice>}
      <div className="form-grid">
        <Field label="Name" required error={errors.name}>
          <input type="text" value={values.name} onChange={set('name')} />
        </Field>
        <Field label="Kind" error={errors.kind}>
          <select value={values.kind} onChange={set('kind')}>
            {KINDS.map((k) => (
              <option key={k.value} value={k.value}>{k.label}</option>
            ))}
          </select>
        </Field>
        <Field label="P4Runtime address" required error={errors.address} hint="host:port, e.g. 127.0.0.1:9559">
          <input type="text" value={values.address} onChange={set('address')} autoComplete="off" />
        </Field>
        <div className="form-grid">
          <Field label="Device id" error={errors.device_id}>
            <input type="text" inputMode="numeric" value={values.deviceId} onChange={set('deviceId')} />
          </Field>
          <Field label="Election id" error={errors.election_id}>
            <input type="text" inputMode="numeric" value={values.electionId} onChange={set('electionId')} />
          </Field>
        </div>
        <Field label="TLS CA certificate path" error={errors.tls_ca_path}>
          <input type="text" value={values.tlsCa} onChange={set('tlsCa')} />
        </Field>
        <Field label="TLS client certificate path" error={errors.tls_cert_path}>
          <input type="text" value={values.tlsCert} onChange={set('tlsCert')} />
        </Field>
        <Field label="TLS client key path" error={errors.tls_key_path}>
          <input type="text" value={values.tlsKey} onChange={set('tlsKey')} />
        </Field>
        <Field label="Description" error={errors.description}>
          <input type="text" value={values.description} onChange={set('description')} />
        </Field>
      </div>
      <div className="form-actions">
        <Button type="submit" variant="primary" busy={create.isPending || update.isPending}>
          {creating ? 'Add switch' : 'Save switch'}
        </Button>
        <Button onClick={onCancel}>Cancel</Button>
      </div>
    </form>
  );
}
