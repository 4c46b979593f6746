import { PageHeader } from '@/components/ui/page-header';
import { UsersList } from '@/features/users/components/users-list';
import { useUser } from '@/lib/auth';

export function UsersRoute() {
  const me = useUser();
  return (
    <div className="stack">
      <PageHeader title="Users" description="Viewers read; operators change the network; admins also manage users." />
      <UsersList meId={me?.id} />
    </div>
  );
}
