import { ClusterChoice } from '../src/clusterDialogs';

describe('ClusterChoice', () => {
  const choices = [
    { name: 'dr', facts: 'x:1' },
    { name: 'main', facts: 'k1:9092 \u00b7 standby dr' }
  ];

  it('offers the clusters, the first checked', () => {
    const form = new ClusterChoice('Move it to:', choices);
    const inputs = [...form.node.querySelectorAll<HTMLInputElement>('input[name="cluster"]')];
    expect(inputs.map(i => [i.value, i.checked])).toEqual([
      ['dr', true],
      ['main', false]
    ]);
    expect(form.node.querySelector('.dw-choice')!.textContent).toBe('drx:1');
    expect(form.node.querySelector('input[name="reason"]')).toBeNull();
    expect(form.getValue()).toEqual({ cluster: 'dr', reason: '' });
  });

  it('gives the chosen cluster and the reason typed', () => {
    const form = new ClusterChoice('Fail over to:', choices, true);
    form.node.querySelectorAll<HTMLInputElement>('input[name="cluster"]')[1].checked = true;
    (form.node.querySelector('input[name="reason"]') as HTMLInputElement).value = '  main is down ';
    expect(form.getValue()).toEqual({ cluster: 'main', reason: 'main is down' });
  });
});
