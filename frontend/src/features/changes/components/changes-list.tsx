import { Fragment, useState } from 'react';

import { useUsers } from '@/api/get-users';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Field } from '@/components/ui/field';
import { QueryView } from '@/components/ui/query-view';
import { StateView } from '@/components/ui/states';
import type { ChangeAction, ChangePublic, EntityType } from '@/lib/api/schema';
import { formatDateTime } from '@/lib/format';

import { useChanges } from '../api/get-changes';

const PAGE = 50;
const ENTITIES: EntityType[] = ['switch', 'link', 'slice', 'user', 'api_token'];
const ACTIONS: ChangeAction[] = ['create', 'update', 'delete'];

function show(value: unknown): string {
  if (value === null || value === undefined) return '—';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Fields whose value differs between before and after (all fields of a create/delete). */
export function changedFields(change: Pick<ChangePublic, 'before' | 'after'>): { key: string; before: unknown; after: unknown }[] {
  const before = change.before ?? {};
  const after = change.after ?? {};
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return keys
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
    .map((k) => ({ key: k, before: before[k], after: after[k] }));
}

/** `resolveUsers`: show usernames (the user list is for admins; others see user ids). */
export function ChangesList({ resolveUsers = false }: { resolveUsers?: boolean }) {
  const users = useUsers(resolveUsers);
  const userName = new Map((users.data?.data ?? []).map((u) => [u.id, u.username] as const));
  const [entity, setEntity] = useState<EntityType | ''>('');
  const [action, setAction] = useState<ChangeAction | ''>('');
  const [page, setPage] = useState(0);
  const [open, setOpen] = useState<number | null>(null);
  const changes = useChanges({
    ...(entity ? { entity_type: entity } : {}),
    ...(action ? { action } : {}),
    skip: page * PAGE,
    limit: PAGE,
  });
  return (
    <div>
      <div className="toolbar">
        <Field label="Object">
          <select value={entity} onChange={(e) => { setEntity(e.target.value as EntityType | ''); setPage(0); }}>
            <option value="">Any object</option>
            {ENTITIES.map((e) => <option key={e} value={e}>{e.replace('_', ' ')}</option>)}
          </select>
        </Field>
        <Field label="Action">
          <select value={action} onChange={(e) => { setAction(e.target.value as ChangeAction | ''); setPage(0); }}>
            <option value="">Any action</option>
            {ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
          </select>
        </Field>
      </div>
      <QueryView query={changes} what="changes" isEmpty={(d) => d.data.length === 0} empty={<StateView kind="empty" title="No change recorded" detail="Every change to switches, links, slices, users and tokens appears here with who made it." />}>
        {(data) => (
          <>
            <div className="table-wrap">
              <table className="table" aria-label="Change log">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Who</th>
                    <th scope="col">Action</th>
                    <th scope="col">Object</th>
                    <th scope="col">Request</th>
                    <th scope="col"><span className="visually-hidden">Details</span></th>
                  </tr>
                </thead>
                <tbody>
                  {data.data.map((c) => (
                    <Fragment key={c.id}>
                      <tr>
                        <td className="nowrap">{formatDateTime(c.occurred_at)}</td>
                        <td>{c.user_id === null ? <span className="muted">system</span> : (userName.get(c.user_id) ?? `user ${c.user_id}`)}</td>
                        <td><Badge tone={c.action === 'delete' ? 'bad' : c.action === 'create' ? 'ok' : 'info'}>{c.action}</Badge></td>
                        <td>{c.entity_type.replace('_', ' ')} <strong>{c.entity_name}</strong> <span className="muted">#{c.entity_id}</span></td>
                        <td className="mono small muted">{c.request_id.slice(0, 12)}</td>
                        <td className="cell-actions">
                          <Button size="sm" variant="ghost" aria-expanded={open === c.id} onClick={() => setOpen(open === c.id ? null : c.id)}>
                            {open === c.id ? 'Hide' : 'Details'}
                          </Button>
                        </td>
                      </tr>
                      {open === c.id && (
                        <tr>
                          <td colSpan={6}>
                            <div className="diff">
                              {changedFields(c).map((f) => (
                                <Fragment key={f.key}>
                                  <span className="muted">{f.key}</span>
                                  <span className="old mono">{c.before ? show(f.before) : ''}</span>
                                  <span className="new mono">{c.after ? show(f.after) : ''}</span>
                                </Fragment>
                              ))}
                            </div>
                          </td>
                        </tr>
                      )}
                    </Fragment>
                  ))}
                </tbody>
              </table>
            </div>
            <div className="row" style={{ marginTop: 10, justifyContent: 'space-between' }}>
              <span className="muted small">
                {page * PAGE + 1}–{page * PAGE + data.data.length} of {data.count}
              </span>
              <div className="row">
                <Button size="sm" disabled={page === 0} onClick={() => setPage((p) => p - 1)}>Newer</Button>
                <Button size="sm" disabled={(page + 1) * PAGE >= data.count} onClick={() => setPage((p) => p + 1)}>Older</Button>
              </div>
            </div>
          </>
        )}
      </QueryView>
    </div>
  );
}
