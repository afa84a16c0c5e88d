import { ServerConnection } from '@jupyterlab/services';

import { errorOf, ServiceError, WorkbenchAPI } from '../src/api';
import { job, kafkaCluster, kafkaProbe, sparkCluster } from './jobs';

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

describe('the cluster routes', () => {
  /** A client whose requests are recorded (without Jupyter's cache-busting `?TIME`) and
   * answered with `answer` (status 200). */
  function recording(answer: unknown): {
    api: WorkbenchAPI;
    sent: { url: string; method: string; body: any }[];
  } {
    const sent: { url: string; method: string; body: any }[] = [];
    const fetch = async (input: RequestInfo, init?: RequestInit) => {
      const request = input instanceof Request ? input : new Request(input, init);
      const text = await request.text();
      sent.push({
        url: request.url.replace(/\?\d+$/, ''),
        method: request.method,
        body: text ? JSON.parse(text) : null
      });
      return new Response(JSON.stringify(answer), {
        status: 200,
        headers: { 'Content-Type': 'application/json' }
      });
    };
    const settings = ServerConnection.makeSettings({ baseUrl: 'http://h/', fetch: fetch as any });
    return { api: new WorkbenchAPI(settings), sent };
  }

  it('lists the Spark and Kafka clusters', async () => {
    const spark = recording({ clusters: [sparkCluster()] });
    expect(await spark.api.clusters()).toEqual([sparkCluster()]);
    const kafka = recording({ kafka_clusters: [kafkaCluster()] });
    expect(await kafka.api.kafkaClusters()).toEqual([kafkaCluster()]);
    const probe = recording(kafkaProbe({ name: 'd r' }));
    expect((await probe.api.kafkaCluster('d r')).reachable).toBe(true);
    expect([spark.sent[0].url, kafka.sent[0].url, probe.sent[0].url]).toEqual([
      'http://h/workbench/api/clusters',
      'http://h/workbench/api/kafka-clusters',
      'http://h/workbench/api/kafka-clusters/d%20r'
    ]);
  });

  it('moves a job and fails it over, with a reason only when given', async () => {
    const { api, sent } = recording(job({ cluster: 'local-b' }));
    expect((await api.move(7, 'local-b')).cluster).toBe('local-b');
    await api.failover('surge', 'dr', 'main is down');
    await api.failover('surge', 'dr');
    expect(sent).toEqual([
      { url: 'http://h/workbench/api/jobs/7/move', method: 'POST', body: { cluster: 'local-b' } },
      {
        url: 'http://h/workbench/api/jobs/surge/failover',
        method: 'POST',
        body: { kafka_cluster: 'dr', reason: 'main is down' }
      },
      { url: 'http://h/workbench/api/jobs/surge/failover', method: 'POST', body: { kafka_cluster: 'dr' } }
    ]);
  });
});
