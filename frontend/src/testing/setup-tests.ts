import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, vi } from 'vitest';

import { sessionStore } from '@/lib/session';

// jsdom has no layout: scrolling is a no-op.
if (typeof Element !== 'undefined' && !Element.prototype.scrollIntoView) {
  Element.prototype.scrollIntoView = () => {};
}

// uPlot draws on a canvas, which jsdom does not have: charts render their frame only.
vi.mock('uplot', () => {
  class FakePlot {
    constructor(_opts: unknown, _data: unknown, target: HTMLElement) {
      const canvas = document.createElement('div');
      canvas.setAttribute('data-testid', 'uplot');
      target.appendChild(canvas);
    }
    setData() {}
    setSize() {}
    destroy() {}
    valToPos() {
      return 0;
    }
  }
  return { default: FakePlot };
});

afterEach(() => {
  if (typeof document !== 'undefined') cleanup();
  if (typeof window !== 'undefined') {
    sessionStore.end();
    window.localStorage.clear();
  }
});
