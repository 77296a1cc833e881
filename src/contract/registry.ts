// Every endpoint of SPEC's compatible API, offered or not yet: the whole contract.
// Only the endpoints a handler registers (http/router.ts) are published as offered.
import { audioEndpoints } from './endpoints/audio.ts';
import { batchesEndpoints } from './endpoints/batches.ts';
import { chatEndpoints } from './endpoints/chat.ts';
import { completionsEndpoints } from './endpoints/completions.ts';
import { containersEndpoints } from './endpoints/containers.ts';
import { conversationsEndpoints } from './endpoints/conversations.ts';
import { decisionsEndpoints } from './endpoints/decisions.ts';
import { embeddingsEndpoints } from './endpoints/embeddings.ts';
import { filesEndpoints } from './endpoints/files.ts';
import { imagesEndpoints } from './endpoints/images.ts';
import { modelsEndpoints } from './endpoints/models.ts';
import { moderationsEndpoints } from './endpoints/moderations.ts';
import { responsesEndpoints } from './endpoints/responses.ts';
import { skillsEndpoints } from './endpoints/skills.ts';
import { vectorStoresEndpoints } from './endpoints/vector-stores.ts';
import type { EndpointContract } from './types.ts';

export const ALL_ENDPOINTS: readonly EndpointContract[] = [
  ...modelsEndpoints,
  ...chatEndpoints,
  ...completionsEndpoints,
  ...responsesEndpoints,
  ...conversationsEndpoints,
  ...embeddingsEndpoints,
  ...moderationsEndpoints,
  ...decisionsEndpoints,
  ...imagesEndpoints,
  ...audioEndpoints,
  ...filesEndpoints,
  ...batchesEndpoints,
  ...containersEndpoints,
  ...vectorStoresEndpoints,
  ...skillsEndpoints,
];
