import { PromoteForm, schemaChoices } from '../src/promoteDialog';
import { SchemaVersion } from '../src/types';

function version(number: number, note = ''): SchemaVersion {
  return {
    number,
    sha256: 'ab',
    created_at: '',
    author: 'alice',
    note,
    source: 'protos',
    breaking: [],
    messages: []
  };
}

describe('the schema version of a promotion', () => {
  it('offers the latest first, then each version, newest first', () => {
    expect(schemaChoices([version(1), version(2, 'renamed')])).toEqual([
      ['latest: 2 \u00b7 alice \u00b7 renamed', ''],
      ['2 \u00b7 alice \u00b7 renamed', '2'],
      ['1 \u00b7 alice', '1']
    ]);
    expect(schemaChoices([])).toEqual([['bundled (no version published)', '']]);
  });

  it('asks for the chosen version, or none for the latest', () => {
    const defaults = { notebook: 'nb.ipynb', name: 'surge', team: 'pricing', cluster: '' };
    const form = new PromoteForm(defaults, null, [version(1), version(2)]);
    const select = form.node.querySelector('select[name="schema_version"]') as HTMLSelectElement;
    expect(select.selectedOptions[0].textContent).toBe('latest: 2 \u00b7 alice');
    expect(form.getValue().schema_version).toBeUndefined();
    select.value = '1';
    expect(form.getValue()).toMatchObject({ team: 'pricing', name: 'surge', schema_version: 1 });
  });
});
