import type { ReactNode } from 'react';

export function Card({
  title,
  actions,
  children,
  className,
  id,
  subtitle,
}: {
  title?: ReactNode;
  subtitle?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  className?: string;
  id?: string;
}) {
  const headingId = id ? `${id}-title` : undefined;
  return (
    <section className={`card ${className ?? ''}`} aria-labelledby={headingId} id={id}>
      {(title || actions) && (
        <header className="card-header">
          <div>
            {title && (
              <h2 className="card-title" id={headingId}>
                {title}
              </h2>
            )}
            {subtitle && <p className="card-subtitle">{subtitle}</p>}
          </div>
          {actions && <div className="card-actions">{actions}</div>}
        </header>
      )}
      <div className="card-body">{children}</div>
    </section>
  );
}
