import { ServerConnection } from '@jupyterlab/services';

import { errorOf, ServiceError, WorkbenchAPI } from '../src/api';

describe('WorkbenchAPI', () => {
  const api = new WorkbenchAPI(ServerConnection.makeSettings({ baseUrl: 'http://h/user/alice/' }));

  it('builds URLs under the base URL, dropping empty query items', () => {
    expect(api.url('jobs')).toBe('http://h/user/alice/workbench/api/jobs');
    expect(api.url('jobs/7/logs', { offset: 0, run: undefined, limit: 0 })).toBe(
      'http://h/user/alice/workbench/api/jobs/7/logs?offset=0&limit=0'
    );
    expect(api.url('alerts', { team: '', firing: 1 })).toBe(
      'http://h/user/alice/workbench/api/alerts?firing=1'
    );
    expect(api.pageUrl('jobs/surge/health')).toBe('http://h/user/alice/workbench/jobs/surge/health');
  });
});

describe('errorOf', () => {
  it("reads the service's JSON error", async () => {
    const body = { error: { status: 403, type: 'JobForbiddenError', message: "User 'bob' may not stop" } };
    const err = await errorOf(new Response(JSON.stringify(body), { status: 403 }));
    expect([err.status, err.kind, err.message, err.unreachable]).toEqual([
      403,
      'JobForbiddenError',
      "User 'bob' may not stop",
      false
    ]);
  });

  it('says a gateway error or no answer is unreachable', async () => {
    const err = await errorOf(
      new Response('<html>Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway' })
    );
    expect(err.unreachable).toBe(true);
    expect(err.message).toBe('502: Bad Gateway');
    expect(new ServiceError(0, 'Unreachable', 'no answer').unreachable).toBe(true);
  });
});
