import type { CatalogDeps } from '../src/catalog';
import { rankIndicators, semanticLeg } from '../src/search/rank';

export interface LabeledQuery {
  q: string;
  /** The indicator id (of `indicadores.csv`) a person typing `q` is looking for. */
  expected: string;
  kind: 'accents' | 'typo' | 'paraphrase';
}

/**
 * Labeled queries over the reference provider's 102 definitions: what a person would type, without
 * accents, with typos, or in other words than the definition's. Written once by hand, before measuring,
 * and not edited to make the figure go up. Paraphrases that share no word, stem or synonym with the
 * definition are kept on purpose: they show what the local embedder cannot do.
 */
export const LABELED_QUERIES: LabeledQuery[] = [
  // Missing accents, case.
  { q: 'populacao estimada', expected: 'POP_EST', kind: 'accents' },
  { q: 'TAXA DE MORTALIDADE INFANTIL', expected: 'SAU_MORT_INF', kind: 'accents' },
  { q: 'indice de gini', expected: 'ECO_GINI', kind: 'accents' },
  { q: 'densidade demografica', expected: 'DEM_DENS', kind: 'accents' },
  { q: 'esperanca de vida ao nascer', expected: 'DEM_ESPERANCA', kind: 'accents' },
  { q: 'frota de veiculos', expected: 'INF_FROTA', kind: 'accents' },
  { q: 'pib per capita', expected: 'ECO_PIB_PC', kind: 'accents' },
  { q: 'ideb anos iniciais', expected: 'EDU_IDEB_AI', kind: 'accents' },
  { q: 'cobertura vacinal poliomielite', expected: 'SAU_COB_VAC', kind: 'accents' },
  { q: 'participacao na populacao do estado', expected: 'POP_PART_UF', kind: 'accents' },
  { q: 'domicilios com energia eletrica', expected: 'SAN_ENERGIA', kind: 'accents' },
  { q: 'area plantada de soja', expected: 'ECO_AGRO_SOJA', kind: 'accents' },
  // Typos.
  { q: 'mortalidde materna', expected: 'SAU_MORT_MAT', kind: 'typo' },
  { q: 'analfabetimso', expected: 'EDU_ANALF', kind: 'typo' },
  { q: 'desmatamneto', expected: 'AMB_DESMAT', kind: 'typo' },
  { q: 'taxa de homicidos', expected: 'SEG_HOMICIDIOS', kind: 'typo' },
  { q: 'populaçao residente', expected: 'POP_EST', kind: 'typo' },
  { q: 'saneamento adequdo', expected: 'SAN_DOMIC_ADEQ', kind: 'typo' },
  { q: 'bolsa familia', expected: 'ASS_BOLSA_FAMILIA', kind: 'typo' },
  { q: 'cadastro unico', expected: 'ASS_CADUNICO', kind: 'typo' },
  { q: 'salario medio dos trabalhadores', expected: 'TRA_SAL_MEDIO', kind: 'typo' },
  { q: 'taxa de desocupaçao', expected: 'TRA_DESOCUP', kind: 'typo' },
  { q: 'crecimento populacional', expected: 'POP_CRESC_ANUAL', kind: 'typo' },
  { q: 'exportaçoes', expected: 'ECO_EXPORT', kind: 'typo' },
  // Paraphrases.
  { q: 'quantas pessoas moram no município', expected: 'POP_EST', kind: 'paraphrase' },
  { q: 'taxa de desemprego', expected: 'TRA_DESOCUP', kind: 'paraphrase' },
  { q: 'quantos carros tem na cidade', expected: 'INF_FROTA', kind: 'paraphrase' },
  { q: 'mortes de bebês', expected: 'SAU_MORT_INF', kind: 'paraphrase' },
  { q: 'desigualdade de renda', expected: 'ECO_GINI', kind: 'paraphrase' },
  { q: 'assassinatos por habitante', expected: 'SEG_HOMICIDIOS', kind: 'paraphrase' },
  { q: 'casas com luz', expected: 'SAN_ENERGIA', kind: 'paraphrase' },
  { q: 'lixo recolhido nas casas', expected: 'SAN_LIXO', kind: 'paraphrase' },
  { q: 'acesso à internet', expected: 'INF_INTERNET', kind: 'paraphrase' },
  { q: 'quantas escolas existem', expected: 'EDU_ESCOLAS', kind: 'paraphrase' },
  { q: 'gravidez de adolescentes', expected: 'SAU_GRAVIDEZ_ADOL', kind: 'paraphrase' },
  { q: 'crianças pequenas na creche', expected: 'EDU_MATRIC_CRECHE', kind: 'paraphrase' },
  { q: 'imposto predial arrecadado', expected: 'FIN_IPTU', kind: 'paraphrase' },
  { q: 'quantidade de empresas', expected: 'ECO_EMPRESAS', kind: 'paraphrase' },
  { q: 'cabeças de gado', expected: 'ECO_REBANHO_BOV', kind: 'paraphrase' },
  { q: 'queimadas', expected: 'AMB_FOCOS_CALOR', kind: 'paraphrase' },
  {
    q: 'quanto a população cresceu em relação ao ano anterior',
    expected: 'POP_CRESC_ANUAL',
    kind: 'paraphrase',
  },
  { q: 'posição entre as cidades mais populosas do estado', expected: 'POP_RANK_UF', kind: 'paraphrase' },
  { q: 'médicos por habitante', expected: 'SAU_MEDICOS', kind: 'paraphrase' },
  { q: 'evasão escolar no ensino médio', expected: 'EDU_ABANDONO', kind: 'paraphrase' },
  { q: 'professores com faculdade', expected: 'EDU_DOCENTE_SUP', kind: 'paraphrase' },
  { q: 'violência contra a mulher', expected: 'SEG_VIOL_MULHER', kind: 'paraphrase' },
  { q: 'quanto o município deve', expected: 'FIN_DIVIDA', kind: 'paraphrase' },
  { q: 'água que se perde nos canos', expected: 'SAN_PERDAS_AGUA', kind: 'paraphrase' },
  { q: 'pessoas morando em favelas', expected: 'SAN_AGLOM_SUBN', kind: 'paraphrase' },
  { q: 'sinal de celular', expected: 'INF_CELULAR', kind: 'paraphrase' },
  { q: 'emissão de carbono', expected: 'AMB_EMISSOES', kind: 'paraphrase' },
  { q: 'passar fome', expected: 'ASS_INSEG_ALIM', kind: 'paraphrase' },
  { q: 'benefício para idosos e deficientes', expected: 'ASS_BPC', kind: 'paraphrase' },
  { q: 'expectativa de vida', expected: 'DEM_ESPERANCA', kind: 'paraphrase' },
  { q: 'quantos filhos cada mulher tem', expected: 'DEM_FECUND', kind: 'paraphrase' },
  { q: 'ruas asfaltadas', expected: 'INF_PAVIMENT', kind: 'paraphrase' },
  { q: 'roubo de carros', expected: 'SEG_FURTO_VEIC', kind: 'paraphrase' },
  { q: 'gasto com saúde por pessoa', expected: 'SAU_GASTO_PC', kind: 'paraphrase' },
  { q: 'mata nativa preservada', expected: 'AMB_VEGET_NAT', kind: 'paraphrase' },
  { q: 'crianças que trabalham', expected: 'TRA_TRAB_INFANTIL', kind: 'paraphrase' },
  { q: 'quantos bebês nasceram', expected: 'DEM_NASC', kind: 'paraphrase' },
  { q: 'gente com mais de 60 anos em relação aos jovens', expected: 'DEM_ENVELH', kind: 'paraphrase' },
];

export interface RecallReport {
  k: number;
  queries: number;
  /** recall@k of the full ranking (exact match, semantic and lexical legs fused). */
  hybrid: number;
  /** recall@k of the semantic leg alone (the configured embedder against the vector index). */
  semantic: number;
  byKind: Record<LabeledQuery['kind'], { queries: number; hybrid: number; semantic: number }>;
  /** Queries whose expected indicator is not in the hybrid top k, with what came instead. */
  misses: { q: string; expected: string; got: string[] }[];
}

/** Measures recall@k of the catalog's ranking over `queries` (the catalog must have synced the reference provider). */
export async function measureRecall(
  deps: Pick<CatalogDeps, 'embedder' | 'index' | 'catalog'>,
  queries: readonly LabeledQuery[] = LABELED_QUERIES,
  k = 5,
): Promise<RecallReport> {
  const snapshot = await deps.catalog.snapshot();
  const byKind = {} as RecallReport['byKind'];
  const misses: RecallReport['misses'] = [];
  let hybridHits = 0;
  let semanticHits = 0;
  for (const query of queries) {
    const ranked = await rankIndicators(deps, snapshot, query.q, k);
    const semantic = (await semanticLeg(deps, snapshot, query.q, k)).map((d) => d.indicatorId);
    const got = ranked.map((r) => r.doc.indicatorId);
    const hit = got.includes(query.expected);
    const semanticHit = semantic.includes(query.expected);
    if (hit) hybridHits++;
    else misses.push({ q: query.q, expected: query.expected, got });
    if (semanticHit) semanticHits++;
    const entry = byKind[query.kind] ?? { queries: 0, hybrid: 0, semantic: 0 };
    byKind[query.kind] = entry;
    entry.queries++;
    entry.hybrid += hit ? 1 : 0;
    entry.semantic += semanticHit ? 1 : 0;
  }
  for (const entry of Object.values(byKind)) {
    entry.hybrid /= entry.queries;
    entry.semantic /= entry.queries;
  }
  return {
    k,
    queries: queries.length,
    hybrid: hybridHits / queries.length,
    semantic: semanticHits / queries.length,
    byKind,
    misses,
  };
}
