import type { ReactNode } from 'react';

export type NoticeTone = 'info' | 'ok' | 'warn' | 'bad';

/** An inline message inside a page; errors are announced to screen readers. */
export function Notice({
  tone = 'info',
  title,
  children,
  actions,
}: {
  tone?: NoticeTone;
  title?: ReactNode;
  children?: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <div className={`notice notice-${tone}`} role={tone === 'bad' ? 'alert' : 'status'}>
      <div className="notice-text">
        {title && <strong className="notice-title">{title}</strong>}
        {children && <div>{children}</div>}
      </div>
      {actions && <div className="notice-actions">{actions}</div>}
    </div>
  );
}
