import { ApiError, fieldErrors, networkError, problemFrom } from './problem';

describe('problemFrom', () => {
  it('reads an RFC 9457 problem with its fields', () => {
    const error = problemFrom(422, 'Unprocessable', {
      type: 'https://sliceportal.dev/problems/validation-error',
      title: 'Invalid request',
      status: 422,
      detail: 'body.rate_bps: must be greater than 0',
      field: 'body.rate_bps',
      errors: [{ field: 'body.rate_bps', message: 'must be greater than 0' }, { field: 'body.sla.max_delay_s', message: 'too big' }],
    });
    expect(error.kind).toBe('validation-error');
    expect(fieldErrors(error)).toEqual({ rate_bps: 'must be greater than 0', 'sla.max_delay_s': 'too big' });
  });

  it('leaves an error that names no input to the message', () => {
    const error = problemFrom(422, 'Unprocessable', {
      type: 'https://sliceportal.dev/problems/validation-error',
      title: 'Invalid request',
      status: 422,
      detail: 'the slices do not fit',
      errors: [{ field: null, message: 'the slices do not fit' }],
    });
    expect(fieldErrors(error)).toEqual({});
  });

  it('recognises an admission rejection with its violations and fixes', () => {
    const error = problemFrom(409, 'Conflict', {
      type: 'https://sliceportal.dev/problems/admission-rejected',
      title: 'Slices would miss their delay bounds',
      status: 409,
      detail: 'x',
      violations: [],
      fixes: [{ link_id: 1, kind: 'capacity', capacity_bps: 828e6, detail: 'raise' }],
    });
    expect(error.isAdmissionRejected).toBe(true);
    expect(error.problem.fixes?.[0]?.kind).toBe('capacity');
  });

  it('tells a missing endpoint from a missing object', () => {
    const route = problemFrom(404, 'Not Found', { type: 'https://sliceportal.dev/problems/not-found', title: 'Not Found', status: 404, detail: 'Not Found' });
    const object = problemFrom(404, 'Not Found', { type: 'https://sliceportal.dev/problems/not-found', title: 'Not found', status: 404, detail: 'slice 9 does not exist' });
    expect(route.isMissingEndpoint).toBe(true);
    expect(object.isMissingEndpoint).toBe(false);
    expect(problemFrom(405, 'Method Not Allowed', undefined).isMissingEndpoint).toBe(true);
  });

  it('survives bodies that are not problems', () => {
    const error = problemFrom(502, 'Bad Gateway', '<html>');
    expect(error).toBeInstanceOf(ApiError);
    expect(error.problem.detail).toBe('Bad Gateway');
    expect(networkError(new TypeError('fetch failed')).isNetwork).toBe(true);
  });
});
