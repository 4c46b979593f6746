import { useState, type FormEvent } from 'react';

import { useUsers } from '@/api/get-users';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { Field } from '@/components/ui/field';
import { Notice } from '@/components/ui/notice';
import { QueryView } from '@/components/ui/query-view';
import type { Role, UserPublic } from '@/lib/api/schema';
import { ROLES, ROLE_LABELS } from '@/lib/authorization';
import { formatDateTime } from '@/lib/format';
import { errorMessage, fieldErrors } from '@/lib/problem';

import { useCreateUser } from '../api/create-user';
import { useUpdateUser } from '../api/update-user';

const USERNAME = /^[A-Za-z0-9_.@-]+$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

export function validateUser(v: { username: string; password: string; email: string }): Record<string, string> {
  const e: Record<string, string> = {};
  if (!v.username) e.username = 'Required.';
  else if (v.username.length > 64 || !USERNAME.test(v.username)) e.username = 'Up to 64 letters, digits and _ . @ -';
  if (v.password.length < 8 || v.password.length > 128) e.password = '8 to 128 characters.';
  if (v.email && (v.email.length > 254 || !EMAIL.test(v.email))) e.email = 'Not an email address.';
  return e;
}

function NewUserForm({ onDone }: { onDone: () => void }) {
  const [v, setV] = useState({ username: '', password: '', email: '', fullName: '', role: 'viewer' as Role });
  const [submitted, setSubmitted] = useState(false);
  const [server, setServer] = useState<Record<string, string>>({});
  const create = useCreateUser();
  const errors = { ...(submitted ? validateUser(v) : {}), ...server };
  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    setSubmitted(true);
    if (Object.keys(validateUser(v)).length) return;
    try {
      await create.mutateAsync({
        username: v.username,
        password: v.password,
        full_name: v.fullName,
        role: v.role,
        ...(v.email ? { email: v.email } : {}),
      });
      onDone();
    } catch (error) {
      setServer(fieldErrors(error));
    }
  }
  return (
    <form className="form" onSubmit={(e) => void onSubmit(e)} noValidate aria-label="New user">
      {create.error && <Notice tone="bad" title="Not created">{errorMessage(create.error)}</Notice>}
      <div className="form-grid">
        <Field label="Username" required error={errors.username}>
          <input type="text" value={v.username} autoComplete="off" onChange={(e) => { setV({ ...v, username: e.target.value }); setServer({}); }} />
        </Field>
        <Field label="Password" required error={errors.password} hint="At least 8 characters.">
          <input type="password" value={v.password} autoComplete="new-password" onChange={(e) => setV({ ...v, password: e.target.value })} />
        </Field>
        <Field label="Full name">
          <input type="text" value={v.fullName} onChange={(e) => setV({ ...v, fullName: e.target.value })} />
        </Field>
        <Field label="Email" error={errors.email}>
          <input type="email" value={v.email} onChange={(e) => setV({ ...v, email: e.target.value })} />
        </Field>
        <Field label="Role">
          <select value={v.role} onChange={(e) => setV({ ...v, role: e.target.value as Role })}>
            {ROLES.map((r) => <option key={r} value={r}>{ROLE_LABELS[r]}</option>)}
          </select>
        </Field>
      </div>
      <div className="form-actions">
        <Button type="submit" variant="primary" busy={create.isPending}>Create user</Button>
        <Button onClick={onDone}>Cancel</Button>
      </div>
    </form>
  );
}

function UserRow({ user, isMe }: { user: UserPublic; isMe: boolean }) {
  const update = useUpdateUser();
  return (
    <tr>
      <td>
        <strong>{user.username}</strong>
        {isMe && <span className="muted small"> (you)</span>}
        {user.full_name && <div className="muted small">{user.full_name}</div>}
      </td>
      <td>{user.email ?? <span className="muted">—</span>}</td>
      <td>
        <label className="visually-hidden" htmlFor={`role-${user.id}`}>Role of {user.username}</label>
        <select id={`role-${user.id}`} value={user.role} disabled={isMe || update.isPending} onChange={(e) => update.mutate({ userId: user.id, body: { role: e.target.value as Role } })}>
          {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
        </select>
        {update.error && <div className="field-error">{errorMessage(update.error)}</div>}
      </td>
      <td>{user.is_active ? <Badge tone="ok">active</Badge> : <Badge>deactivated</Badge>}</td>
      <td className="nowrap">{formatDateTime(user.created_at)}</td>
      <td className="cell-actions">
        {!isMe && (
          <Button size="sm" variant={user.is_active ? 'danger' : 'secondary'} busy={update.isPending} onClick={() => update.mutate({ userId: user.id, body: { is_active: !user.is_active } })}>
            {user.is_active ? 'Deactivate' : 'Reactivate'}
          </Button>
        )}
      </td>
    </tr>
  );
}

export function UsersList({ meId }: { meId: number | undefined }) {
  const users = useUsers();
  const [adding, setAdding] = useState(false);
  return (
    <div className="stack">
      {adding ? (
        <Card title="New user"><NewUserForm onDone={() => setAdding(false)} /></Card>
      ) : (
        <div><Button variant="primary" onClick={() => setAdding(true)}>New user</Button></div>
      )}
      <Card>
        <QueryView query={users} what="users" isEmpty={(d) => d.data.length === 0}>
          {(data) => (
            <div className="table-wrap">
              <table className="table" aria-label="Users">
                <thead>
                  <tr>
                    <th scope="col">User</th>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                    <th scope="col"><span className="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  {data.data.map((u) => <UserRow key={u.id} user={u} isMe={u.id === meId} />)}
                </tbody>
              </table>
            </div>
          )}
        </QueryView>
      </Card>
    </div>
  );
}
