// The PromQL editor: CodeMirror 6 with codemirror-promql (highlighting,
// completion of metric and label names from this server, parse errors
// marked in place).
import {EditorView, keymap, placeholder, drawSelection, highlightActiveLine} from '@codemirror/view';
import {EditorState, Prec} from '@codemirror/state';
import {history, historyKeymap, defaultKeymap, insertNewline} from '@codemirror/commands';
import {autocompletion, completionKeymap, closeBrackets, closeBracketsKeymap, closeCompletion} from '@codemirror/autocomplete';
import {syntaxHighlighting, defaultHighlightStyle, bracketMatching} from '@codemirror/language';
import {lintKeymap} from '@codemirror/lint';
import {PromQLExtension} from '@prometheus-io/codemirror-promql';
import {PREFIX} from './api.js';

let promql = null;

function promqlExtension() {
  if (!promql) {
    promql = new PromQLExtension().setComplete({
      remote: {
        url: window.location.origin + PREFIX,
        httpMethod: 'GET',
        lookbackInterval: 12 * 3600 * 1000,
        httpErrorHandler: (e) => console.warn('completion:', e && e.message ? e.message : e),
      },
    });
  }
  return promql.asExtension();
}

// Returns {view, value(), setValue(s)}; onRun is called on Enter
// (Shift-Enter inserts a line break).
export function createEditor(parent, initial, onRun) {
  const run = Prec.highest(keymap.of([
    {key: 'Enter', run: (view) => { closeCompletion(view); onRun(); return true; }},
    {key: 'Shift-Enter', run: insertNewline},
  ]));
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: initial || '',
      extensions: [
        run,
        history(),
        drawSelection(),
        highlightActiveLine(),
        bracketMatching(),
        closeBrackets(),
        autocompletion(),
        syntaxHighlighting(defaultHighlightStyle, {fallback: true}),
        placeholder('Expression (press Enter to run, Shift+Enter for a new line)'),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap,
          ...completionKeymap, ...lintKeymap]),
        EditorView.lineWrapping,
        promqlExtension(),
      ],
    }),
  });
  return {
    view,
    value: () => view.state.doc.toString(),
    setValue: (s) => view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: s}}),
  };
}
