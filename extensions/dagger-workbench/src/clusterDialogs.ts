/**
 * The dialogs of a job's cluster actions (the job details' "Move to cluster…" and "Fail
 * over Kafka…"): pick the cluster (and say why), confirm. They only ask; the caller sends
 * the request and shows its error.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { clusterOf, kafkaFacts, sparkFacts } from './clusterFormat';
import { Job, KafkaCluster, SparkCluster } from './types';

/** A choice of clusters (radio buttons, the first checked) and, if asked, a reason. */
export class ClusterChoice extends Widget {
  constructor(intro: string, choices: { name: string; facts: string }[], reason = false) {
    super();
    this.addClass('dw-cluster-form');
    this.node.innerHTML = '<p></p><div class="dw-choices"></div>';
    this.node.querySelector('p')!.textContent = intro;
    const list = this.node.querySelector('.dw-choices')!;
    choices.forEach((choice, i) => {
      const label = document.createElement('label');
      label.className = 'dw-choice';
      label.innerHTML = '<input type="radio" name="cluster"><b></b><span></span>';
      const input = label.querySelector('input')!;
      input.value = choice.name;
      input.checked = i === 0;
      label.querySelector('b')!.textContent = choice.name;
      label.querySelector('span')!.textContent = choice.facts;
      list.appendChild(label);
    });
    if (reason) {
      const label = document.createElement('label');
      label.innerHTML = 'Reason <input name="reason" placeholder="why (brokers of main down since 09:12)">';
      this.node.appendChild(label);
    }
  }

  getValue(): { cluster: string; reason: string } {
    const checked = this.node.querySelector('input[name="cluster"]:checked') as HTMLInputElement | null;
    const reason = this.node.querySelector('input[name="reason"]') as HTMLInputElement | null;
    return { cluster: checked?.value ?? '', reason: reason?.value.trim() ?? '' };
  }
}

/** The Spark cluster to move `job` to (of `targets`), confirmed; null when cancelled. */
export async function chooseMoveTarget(job: Job, targets: SparkCluster[]): Promise<string | null> {
  const form = new ClusterChoice(
    `${job.name} runs on ${clusterOf(job)}. Move it to:`,
    targets.map(c => ({ name: c.name, facts: sparkFacts(c) }))
  );
  const chosen = await showDialog({
    title: `Move ${job.name} to another cluster`,
    body: form,
    buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Move\u2026' })]
  });
  const cluster = chosen.button.accept ? chosen.value?.cluster : '';
  if (!cluster) {
    return null;
  }
  const confirmed = await showDialog({
    title: `Move ${job.name} to ${cluster}?`,
    body:
      `${job.name} (team ${job.team}) moves from ${clusterOf(job)} to ${cluster}: its run stops ` +
      'after its current micro-batch and a new run starts there from the checkpoint.',
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Move' })]
  });
  return confirmed.button.accept ? cluster : null;
}

/** The Kafka cluster to fail `job`'s streams over to, and why; null when cancelled. */
export async function chooseFailover(
  job: Job,
  clusters: KafkaCluster[]
): Promise<{ cluster: string; reason: string } | null> {
  const form = new ClusterChoice(
    `${job.name}'s streams move to the chosen cluster (a mirror of theirs): a new version ` +
      'whose checkpoint starts at the mirrored offsets.',
    clusters.map(c => ({ name: c.name, facts: kafkaFacts(c) })),
    true
  );
  const answer = await showDialog({
    title: `Fail over ${job.name}'s Kafka streams`,
    body: form,
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Fail over' })]
  });
  return answer.button.accept && answer.value?.cluster ? answer.value : null;
}
