import { SseParser, type SseEvent } from './sse';

function parse(chunks: string[]): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = new SseParser((e) => events.push(e));
  for (const chunk of chunks) parser.push(chunk);
  return events;
}

describe('SseParser', () => {
  it('joins data lines and splits events on blank lines', () => {
    expect(parse(['data: {"a":1}\n\ndata: x\ndata: y\n\n'])).toEqual([
      { event: 'message', data: '{"a":1}' },
      { event: 'message', data: 'x\ny' },
    ]);
  });

  it('handles events split across chunks and CRLF line ends', () => {
    expect(parse(['event: sam', 'ple\r\nid: 7\r\ndata: {"t"', ':1}\r', '\n\r\n'])).toEqual([
      { event: 'sample', data: '{"t":1}', id: '7' },
    ]);
  });

  it('ignores comments (keep-alives) and events without data', () => {
    expect(parse([': ping\n\nevent: x\n\nretry: 3000\ndata: 1\n\n'])).toEqual([{ event: 'message', data: '1', retry: 3000 }]);
  });
});
