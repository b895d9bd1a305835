// xAPI statements (xAPI 1.0.3, ADL's verbs) for Your turn's exercises,
// as data: the host adds the actor and stores them (a Learning Record
// Store, an LMS). One activity per walkthrough (its preset) and one per
// exercise (its cell); the cell and the slip the engine named ride in
// result.extensions.
//
//   answeredStatement({ walkthrough, exercise, label, outcome }) -> statement
//   completedStatement({ walkthrough, outcomes, ms }) -> statement
//   outcome: { state: 'right' | 'shown', response: the text typed, verdict: attn.answer's or null }

export const VERB_ANSWERED = 'http://adlnet.gov/expapi/verbs/answered';
export const VERB_COMPLETED = 'http://adlnet.gov/expapi/verbs/completed';
export const EXTENSION_CELL = 'urn:attention-explainer:xapi:cell';
export const EXTENSION_SLIP = 'urn:attention-explainer:xapi:slip';
const INTERACTION = 'http://adlnet.gov/expapi/activities/cmi.interaction';
const ASSESSMENT = 'http://adlnet.gov/expapi/activities/assessment';

/** The walkthrough's activity id: one per preset. */
export const walkthroughActivity = (preset) => `urn:attention-explainer:walkthrough:${encodeURIComponent(preset)}`;

const exerciseActivity = (walkthrough, { matrix, row, col }) => `${walkthrough}:exercise:${matrix}:${row}:${col}`;

/** An ISO 8601 duration of `ms` milliseconds, to the hundredth of a second ("PT12.34S"). */
export function isoDuration(ms) {
  const hundredths = Math.max(0, Math.round(ms / 10));
  const hours = Math.floor(hundredths / 360000);
  const minutes = Math.floor((hundredths % 360000) / 6000);
  const seconds = (hundredths % 6000) / 100;
  return `PT${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds}S`;
}

export function answeredStatement({ walkthrough, exercise, label, outcome }) {
  const success = outcome.state === 'right';
  return {
    verb: { id: VERB_ANSWERED, display: { 'en-US': 'answered' } },
    object: {
      objectType: 'Activity',
      id: exerciseActivity(walkthrough, exercise),
      definition: { type: INTERACTION, interactionType: 'numeric', name: { 'en-US': `Your turn: ${label}` } },
    },
    result: {
      score: { raw: success ? 1 : 0, min: 0, max: 1, scaled: success ? 1 : 0 },
      success,
      response: outcome.response,
      extensions: {
        [EXTENSION_CELL]: { matrix: exercise.matrix, row: exercise.row, col: exercise.col },
        [EXTENSION_SLIP]: outcome.verdict?.cause ?? null,
      },
    },
    context: { contextActivities: { parent: [{ objectType: 'Activity', id: walkthrough }] } },
    timestamp: new Date().toISOString(),
  };
}

export function completedStatement({ walkthrough, outcomes, ms }) {
  const right = outcomes.filter((outcome) => outcome.state === 'right').length;
  return {
    verb: { id: VERB_COMPLETED, display: { 'en-US': 'completed' } },
    object: { objectType: 'Activity', id: walkthrough, definition: { type: ASSESSMENT } },
    result: {
      score: { raw: right, min: 0, max: outcomes.length, scaled: outcomes.length ? right / outcomes.length : 0 },
      success: right === outcomes.length,
      completion: true,
      duration: isoDuration(ms),
    },
    timestamp: new Date().toISOString(),
  };
}
