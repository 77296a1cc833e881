// The offline moderation engine's rules for text (issue 21 item 2): weighted patterns per
// category, read by text-scorer.ts. Each rule names what it looks for, so a test (or an
// operator) can see why a text scored as it did. Patterns run on normalized text
// (lower case, letters, digits, apostrophes and single spaces); they are built from
// word lists with fixed alternations and bounded gaps, so no text makes them backtrack.
// Idioms that borrow a violent or sexual word for something harmless are removed
// before any rule runs (IDIOMS).
import type { MODERATION_CATEGORIES } from '../../../contract/endpoints/moderations.ts';

export type Category = (typeof MODERATION_CATEGORIES)[number];

export interface Rule {
  id: string;
  category: Category;
  /** How sure the rule is, 0 to 1: fired rules combine as independent evidence. */
  weight: number;
  pattern: RegExp;
}

const any = (words: readonly string[]) => `(?:${words.join('|')})`;
/** Up to `n` words between two parts (each word bounded, so the gap is linear to scan). */
const gap = (n: number) => `(?: [a-z0-9']{1,20}){0,${n}}`;
const rule = (id: string, category: Category, weight: number, source: string): Rule => ({ id, category, weight, pattern: new RegExp(`(?:^| )${source}(?= |$)`, 'g') });

const I_WILL = "(?:i(?:'ll| will| am going to|'m going to| am gonna|'m gonna| gonna| want to| wanna| plan to| intend to)|we(?:'ll| will| are going to|'re going to| gonna))";
const KILL = any(['kill', 'murder', 'stab', 'shoot', 'strangle', 'behead', 'slaughter', 'burn', 'hang', 'beat', 'hurt', 'attack', 'rape', 'torture', 'execute', 'bomb']);
const KILLED = any(['killed', 'murdered', 'stabbed', 'shot', 'strangled', 'beheaded', 'slaughtered', 'exterminated', 'wiped out', 'gassed', 'lynched', 'hanged', 'eradicated']);
const YOU = any(['you', 'u', 'ya', 'your family', 'your kids', 'your wife', 'your husband']);
const PERSON = any(['you', 'him', 'her', 'them', 'someone', 'somebody', 'my neighbor', 'my neighbour', 'my boss', 'my teacher', 'my wife', 'my husband', 'my ex', 'people', 'everyone', 'a person', 'the president']);
const GROUP = any([
  'jews', 'jewish people', 'muslims', 'christians', 'hindus', 'sikhs', 'buddhists', 'atheists', 'black people', 'blacks', 'white people', 'whites', 'asians', 'asian people',
  'latinos', 'hispanics', 'mexicans', 'arabs', 'africans', 'immigrants', 'refugees', 'migrants', 'gays', 'gay people', 'lesbians', 'trans people', 'transgender people',
  'women', 'men', 'disabled people', 'the disabled', 'gypsies', 'roma', 'indigenous people', 'foreigners',
]);
const DEHUMANIZE = any(['vermin', 'animals', 'subhuman', 'sub human', 'parasites', 'cockroaches', 'rats', 'a disease', 'a plague', 'filth', 'savages', 'inferior', 'not human', 'apes', 'monkeys', 'scum', 'trash', 'evil']);
const INSULT = any(['idiot', 'stupid', 'moron', 'worthless', 'pathetic', 'loser', 'ugly', 'disgusting', 'useless', 'dumb', 'trash', 'garbage', 'a joke', 'an embarrassment', 'retarded', 'fat pig', 'waste of space', 'piece of shit', 'piece of garbage', 'failure']);
const MYSELF = any(['myself', 'my self', 'my life', 'it all', 'my own life']);
const SELF_HARM = any(['kill myself', 'killing myself', 'end my life', 'ending my life', 'end it all', 'take my own life', 'commit suicide', 'suicide', 'self harm', 'self-harm', 'cut myself', 'cutting myself', 'hurt myself', 'hurting myself', 'taking an overdose', 'take an overdose', 'overdose on purpose', 'starve myself', 'hang myself', 'slit my wrists', 'jump off a bridge']);
const SEXUAL = any([
  'porn', 'porno', 'pornography', 'pornographic', 'nude', 'nudes', 'naked', 'have sex', 'having sex', 'sex with', 'sexual acts', 'sex act', 'explicit sex', 'orgasm', 'erotic', 'genitals',
  'penis', 'vagina', 'blowjob', 'hardcore', 'xxx', 'sexting', 'masturbat[a-z]{0,6}', 'horny', 'onlyfans', 'strip naked', 'sexually explicit', 'fetish', 'intercourse',
]);
const MINOR = any(['child', 'children', 'kid', 'kids', 'minor', 'minors', 'underage', 'under age', 'preteen', 'pre-teen', 'schoolgirl', 'schoolboy', 'little girl', 'little boy', 'toddler', '1[0-7] year old', '[5-9] year old', '1[0-7] yo', 'teenager', 'young teen', 'middle schooler', 'eighth grader']);
const DRUGS = any(['meth', 'methamphetamine', 'cocaine', 'crack', 'heroin', 'fentanyl', 'lsd', 'mdma', 'ecstasy', 'drugs', 'opioids', 'ketamine']);
const CRIME = any([
  'launder money', 'laundering money', 'money laundering', 'counterfeit money', 'counterfeit bills', 'fake ids?', 'forge (?:a )?(?:passport|signature|documents?)', 'shoplift', 'shoplifting',
  'steal (?:a car|credit cards?|identities|someone s identity|from)', 'hack into', 'hacking into', 'break into (?:a|someone s|my neighbor s) (?:house|home|car|account)', 'phishing (?:email|page|kit)',
  'ransomware', 'credit card fraud', 'tax fraud', 'insurance fraud', 'evade taxes', 'pick a lock', 'hotwire a car', 'sell stolen', 'buy stolen', 'dark web market',
]);
const WEAPON = any(['a bomb', 'a pipe bomb', 'pipe bombs', 'explosives?', 'an explosive device', 'a molotov cocktail', 'napalm', 'a ghost gun', 'an untraceable gun', 'a silencer', 'nerve gas', 'sarin', 'ricin', 'a bioweapon', 'a dirty bomb', 'poison', 'thermite']);
const HOW = "(?:how (?:to|do i|do you|can i|could i|would i|should i)|best way to|easiest way to|quickest way to|painless way to|steps to|instructions (?:for|to)|guide to|teach me (?:how )?to|tell me how to|show me how to|recipe for|tutorial (?:on|for))";
const GORE = any(['blood everywhere', 'pool of blood', 'covered in blood', 'guts', 'entrails', 'intestines spilled', 'dismember(?:ed|ing)?', 'decapitat(?:ed|ion|ing)', 'mutilat(?:ed|ion|ing)', 'disembowel(?:ed|ing)?', 'gore', 'gory', 'severed (?:head|limbs?|arm|leg)', 'brains splattered', 'flayed', 'skinned alive', 'burned alive', 'eyes gouged']);

export const RULES: readonly Rule[] = [
  // Threats: a first person who will do violence to someone.
  rule('threat-you', 'harassment/threatening', 0.9, `${I_WILL}${gap(2)} ${KILL}${gap(1)} ${YOU}`),
  rule('threat-you-violence', 'violence', 0.8, `${I_WILL}${gap(2)} ${KILL}${gap(1)} ${PERSON}`),
  rule('threat-watch-out', 'harassment/threatening', 0.7, `(?:you(?:'re| are) (?:dead|going to die|gonna die)|watch your back|i know where you live|you will pay for this|you(?:'ll| will) regret)`),
  rule('wish-death', 'harassment/threatening', 0.75, `(?:i hope you die|go die|you should die|you deserve to die|kys|go kill yourself|kill yourself)`),
  rule('wish-death-harassment', 'harassment', 0.8, `(?:i hope you die|go die|you should die|you deserve to die|kys|go kill yourself|kill yourself)`),
  // Harassment: insults aimed at the person spoken to.
  // "You're not stupid" is no insult: a negation right after the subject stops the rule.
  rule('insult-you', 'harassment', 0.75, `(?:you(?:'re| are)|ur|you re|such an?)(?! not| never| no)${gap(2)} ${INSULT}`),
  rule('shut-up', 'harassment', 0.35, `(?:shut up|shut your mouth|get lost loser)`),
  rule('unloved', 'harassment', 0.7, `(?:nobody likes you|everyone hates you|no one (?:likes|loves|cares about|wants) you|the world would be better without you)`),
  // Hate: a protected group, dehumanized, or wished harm.
  rule('group-dehumanized', 'hate', 0.85, `(?:all |those |these |the )?${GROUP} (?:are|r|is)${gap(2)} ${DEHUMANIZE}`),
  rule('hate-group', 'hate', 0.7, `i (?:hate|despise|can't stand|cannot stand) (?:all |those |these )?${GROUP}`),
  rule('group-out', 'hate', 0.6, `${GROUP} (?:should|must|need to) (?:go back|get out|leave|not be allowed)`),
  rule('group-killed', 'hate/threatening', 0.9, `(?:${KILL}|exterminate|wipe out|get rid of|gas|deport and kill) (?:all of the |all the |all |every |those |the )?${GROUP}`),
  rule('group-killed-violence', 'violence', 0.7, `(?:${KILL}|exterminate|wipe out|gas) (?:all of the |all the |all |every |those |the )?${GROUP}`),
  rule('group-deserve', 'hate/threatening', 0.85, `${GROUP} (?:should|must|deserve to|need to) (?:be )?(?:die|${KILLED}|hanged|shot|burned)`),
  // Self-harm.
  rule('self-harm-mention', 'self-harm', 0.55, SELF_HARM),
  rule('self-harm-intent', 'self-harm/intent', 0.9, `(?:${I_WILL}|i(?:'m| am) (?:going to|about to|ready to)|i feel like|i'm thinking (?:about|of)|i keep thinking about)${gap(1)} (?:kill(?:ing)? myself|end(?:ing)? ${MYSELF}|die|suicide|commit(?:ting)? suicide|hurt(?:ing)? myself|cut(?:ting)? myself|take my own life|not wake up)`),
  rule('self-harm-wish', 'self-harm/intent', 0.8, `(?:i don't want to live|i do not want to live|i want to die|i wish i (?:was|were) dead|i'd be better off dead|my life is not worth living|no reason to live)`),
  rule('self-harm-how', 'self-harm/instructions', 0.9, `${HOW}${gap(2)} (?:kill (?:myself|yourself|oneself)|commit suicide|end (?:my|your) life|cut (?:myself|yourself)|overdose|hang (?:myself|yourself)|self harm|slit (?:my|your) wrists|starve (?:myself|yourself))`),
  rule('self-harm-dose', 'self-harm/instructions', 0.8, `(?:how many|what dose of|lethal dose of)${gap(2)} (?:pills|sleeping pills|paracetamol|tylenol|acetaminophen|insulin)${gap(4)} (?:kill|die|overdose|lethal)`),
  // Sexual content, and any of it with a minor.
  rule('sexual-term', 'sexual', 0.7, SEXUAL),
  rule('sexual-request', 'sexual', 0.85, `(?:write|describe|tell me|send me|show me|generate)${gap(3)} (?:an? )?(?:explicit|graphic|dirty|erotic|steamy|nsfw|sexual)${gap(2)} (?:story|scene|fantasy|roleplay|sex|pictures?|photos?|content)`),
  rule('sexual-minor', 'sexual/minors', 0.95, `(?:${SEXUAL}|sexual|sexy|seduce|seducing)${gap(6)} ${MINOR}`),
  rule('minor-sexual', 'sexual/minors', 0.95, `${MINOR}${gap(6)} (?:${SEXUAL}|sexual|sexy|seduce|seducing)`),
  // Violence.
  rule('violence-act', 'violence', 0.5, `(?:${KILL}|kills|killing|stabbing|shooting|murdering) ${PERSON}`),
  rule('violence-did', 'violence', 0.6, `${KILLED} ${PERSON}`),
  rule('violence-done', 'violence', 0.55, `(?:was|were|got|been|being) ${KILLED}`),
  rule('violence-massacre', 'violence', 0.6, `(?:massacre|mass shooting|school shooting|genocide|terrorist attack|bombing of|lynching)`),
  rule('violence-how', 'violence', 0.75, `${HOW}${gap(2)} (?:${KILL}) (?:${PERSON}|a human|my)`),
  rule('gore', 'violence/graphic', 0.85, GORE),
  rule('gore-violence', 'violence', 0.5, GORE),
  // Illicit: instructions for crimes; with weapons or harm, illicit/violent.
  rule('drugs-make', 'illicit', 0.85, `${HOW}${gap(2)} (?:make|cook|synthesize|produce|grow|buy|get|smuggle|sell)${gap(1)} ${DRUGS}`),
  rule('crime-how', 'illicit', 0.8, `${HOW}${gap(2)} ${CRIME}`),
  rule('crime-mention', 'illicit', 0.35, CRIME),
  rule('weapon-make', 'illicit/violent', 0.9, `${HOW}${gap(2)} (?:make|build|assemble|create|get|buy|mix|brew|3d print)${gap(1)} ${WEAPON}`),
  rule('weapon-make-illicit', 'illicit', 0.85, `${HOW}${gap(2)} (?:make|build|assemble|create|get|buy|mix|brew|3d print)${gap(1)} ${WEAPON}`),
  rule('poison-person', 'illicit/violent', 0.9, `${HOW}${gap(2)} (?:poison|drug|sedate)${gap(1)} (?:${PERSON}|my|a child)`),
  // Asking how to kill or hurt someone asks for violent wrongdoing.
  rule('kill-how-illicit-violent', 'illicit/violent', 0.85, `${HOW}${gap(2)} (?:${KILL}) (?:${PERSON}|a human)`),
  rule('kill-how-illicit', 'illicit', 0.8, `${HOW}${gap(2)} (?:${KILL}) (?:${PERSON}|a human)`),
  rule('weapon-recipe', 'illicit/violent', 0.85, `${HOW}${gap(1)} ${WEAPON}`),
  rule('weapon-recipe-illicit', 'illicit', 0.8, `${HOW}${gap(1)} ${WEAPON}`),
];

/**
 * Phrases that use a violent, sexual or self-harm word harmlessly: removed before the
 * rules run, so "kill the process" or "shoot a photo" stay clean.
 */
export const IDIOMS: readonly RegExp[] = [
  /\bkill(?:ed|ing|s)? (?:the |a |that |this |my |all )?(?:process(?:es)?|task|job|server|app|application|program|tab|window|container|pod|session|thread|query|connection|engine|lights?|music|mood|time|battery|bug|weeds?|germs|bacteria|it|the vibe|the competition|two birds with one stone)\b/g,
  /\b(?:killing it|killed it|to die for|dying to (?:see|know|try|meet|go|hear)|i'm dying laughing|dead tired|dead serious|drop dead gorgeous|deadline|dead end|dead battery|bored to death|scared to death|laughed to death)\b/g,
  /\bshoot(?:ing|s)? (?:a |the |an |some |me an? )?(?:photo|photos|picture|pictures|video|film|movie|scene|email|message|text|line|note|hoops|the breeze|for the moon|your shot|my shot)\b/g,
  /\b(?:photo ?shoot|shootout in the game|shot of espresso|flu shot|vaccine shot|screenshot|shot glass|big shot|long shot|good shot|nice shot|mugshot)\b/g,
  /\b(?:beat(?:s|ing)? (?:the |my |your )?(?:record|eggs?|batter|deadline|traffic|game|level|boss|odds|heat|drum)|beat it|heartbeat|upbeat)\b/g,
  /\b(?:break a leg|knock(?:ed)? 'em dead|bomb(?:ed)? (?:the|my|an?) (?:exam|test|interview|audition)|photobomb(?:ed)?|bath bombs?|bomb diggity|the bomb)\b/g,
  /\b(?:attack(?:ing)? (?:the |this |a )?(?:problem|issue|task|question|bug|backlog)|heart attack|panic attack|asthma attack)\b/g,
  /\b(?:execute(?:s|d)? (?:the |a |this |my )?(?:plan|script|code|command|query|order|program|function|task|job|trade)|execution (?:time|plan|environment|context))\b/g,
  /\b(?:sex(?:es)? of (?:the )?(?:cat|dog|bird|fish|plant|animal|baby|chick|puppy|kitten)|sex education|sex chromosomes?|sexual reproduction|sexual harassment training|sexual health)\b/g,
  /\b(?:cut (?:the |my |a )?(?:cake|bread|paper|costs?|budget|hair|onions?|vegetables|wood|fabric|line|corners|ties|it out)|cut myself a (?:slice|piece))\b/g,
  /\b(?:hang (?:out|on|up|in there|the picture|a picture|the laundry|my coat)|hanging out)\b/g,
  /\b(?:overdose of (?:sugar|caffeine|coffee|chocolate|tv|netflix)|suicide squad|suicide doors?|suicide prevention|suicide hotline|suicide helpline|crisis line)\b/g,
  /\b(?:burn(?:ed|ing)? (?:a cd|a dvd|calories|the toast|the midnight oil|bridges|through)|sunburn)\b/g,
  /\b(?:hack(?:ed|ing)? (?:together|away|the system of productivity)|life ?hacks?|growth hack(?:ing)?)\b/g,
  /\b(?:stab at (?:it|this|the)|take a stab|fat chance)\b/g,
  /\bnaked (?:eye|truth|ambition|flame|url|function|pointer|singularity)\b/g,
  /\bbomb ?proof\b/g,
  /\b(?:genocide (?:prevention|studies|memorial|remembrance)|prevention of genocide|holocaust (?:memorial|museum|remembrance|education))\b/g,
  // Asking how to help someone is not self-harm: the rest of the sentence goes with it.
  /\b(?:how (?:to|can i|do i|should i|could i) (?:help|support|talk to|reach out to|stop)|ways to (?:help|support)|worried about) (?:someone|somebody|a friend|my friend|my child|my son|my daughter|people|a person|them|him|her)\b.*/g,
];

/** Words that turn a statement around: a rule whose match begins within a few words after one counts for much less. */
export const NEGATIONS = /(?:^| )(?:not|never|no|don't|dont|do not|won't|wont|will not|wouldn't|would not|didn't|did not|can't|cannot|isn't|is not|aren't|are not|stop|against|nobody should|no one should|how to prevent|how to stop|how to help someone who)(?= )/g;
