import { seriesColour } from '@/components/ui/chart';
import { priorityLevels } from '@/lib/analysis';
import type { LinkAnalysis, LinkDocument } from '@/lib/api/schema';
import { formatDelay, formatRate } from '@/lib/format';

/**
 * The link's slices stacked by priority level (7 on top): each bar is the link capacity;
 * grey is taken by higher levels, coloured blocks are the level's slices, the hatched rest
 * is what lower levels get. Beside it: the residual capacity r_i and the level's bound.
 */
export function PriorityStack({
  doc,
  capacityBps,
  analysis,
}: {
  doc: LinkDocument;
  capacityBps: number;
  analysis: LinkAnalysis | undefined;
}) {
  const levels = priorityLevels(doc, capacityBps, analysis);
  const names = doc.slices.map((s) => s.name);
  const pct = (bps: number) => `${Math.max(0, Math.min(100, (bps / capacityBps) * 100))}%`;
  return (
    <div className="levels" role="list" aria-label="Priority levels">
      {levels.map((level) => {
        const above = capacityBps - level.residualBps;
        const empty = level.slices.length === 0;
        return (
          <div key={level.priority} role="listitem" className={`level ${empty ? 'level-empty' : ''}`}>
            <div className="level-name">Priority {level.priority}</div>
            <div className="level-bar" title={`r${level.priority} = ${formatRate(level.residualBps)}`}>
              {above > 0 && <div className="level-above" style={{ width: pct(above) }} />}
              {level.slices.map((s) => (
                <div
                  key={s.name}
                  className="level-slice"
                  style={{ width: pct(s.rateBps), background: seriesColour(names.indexOf(s.name)) }}
                  title={`${s.name}: ${formatRate(s.rateBps)}`}
                >
                  {s.name}
                </div>
              ))}
            </div>
            <div className="level-meta">
              <span className={level.residualBps <= 0 ? 'bound-bad' : undefined}>
                r = {level.residualBps <= 0 ? '≤ 0 (overbooked)' : formatRate(level.residualBps)}
              </span>
              {!empty && (
                <>
                  {' · '}
                  <span className={level.meets === false ? 'bound-bad' : 'bound-ok'}>
                    d = {level.boundS === undefined ? '…' : formatDelay(level.boundS)}
                  </span>
                </>
              )}
            </div>
          </div>
        );
      })}
      <p className="muted small">
        Bar = capacity {formatRate(capacityBps)}; grey = taken by higher priorities; hatched = left to
        lower priorities. r is the residual capacity of the level, d its worst-case delay.
      </p>
    </div>
  );
}
