/**
 * Portuguese-first text normalization shared by the local embedder and the lexical leg of the search:
 * accent and case folding, tokenization, stop words, a light stemmer and a small synonym table of the
 * vocabulary of municipal statistics. Deterministic and dependency-free on purpose: the same text must give
 * the same tokens at sync time and at query time, on every instance.
 */

/** Lower-cases and strips diacritics: `'População'` -> `'populacao'`. */
export function fold(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** Folded words of `text` (letters and digits; everything else separates): `'PIB per-capita'` -> `['pib','per','capita']`. */
export function words(text: string): string[] {
  return fold(text)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** A code or name reduced to its letters and digits, for exact matching: `'POP_EST'` -> `'popest'`. */
export function compact(text: string): string {
  return fold(text).replace(/[^\p{L}\p{N}]+/gu, '');
}

/** Folded stop words: articles, prepositions and contractions that carry no meaning in a query. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a o as os um uma uns umas de do da dos das em no na nos nas por pelo pela pelos pelas para pra com sem ' +
    'e ou que qual quais quanto quantos quanta quantas como onde quando se ao aos à às seu sua seus suas ' +
    'meu minha este esta esse essa isso isto aquele aquela ha tem ter sao e eh foi ser mais menos muito ' +
    'the of in and per qual cidade municipio municipios municipal dados indicador indicadores'
  )
    .split(' ')
    .map(fold),
);

// Suffixes removed by the stemmer, longest first. A light RSLP-like reduction: enough to join
// "vacinação/vacinados/vacina" or "escolas/escolar", not a linguistic stemmer.
const SUFFIXES = [
  'amentos',
  'imentos',
  'alidade',
  'acional',
  'acoes',
  'icoes',
  'amento',
  'imento',
  'idades',
  'mente',
  'idade',
  'acao',
  'icao',
  'ador',
  'ados',
  'adas',
  'idos',
  'idas',
  'ismo',
  'ista',
  'ivel',
  'avel',
  'ado',
  'ada',
  'ido',
  'ida',
  'oso',
  'osa',
  'al',
  'ar',
  'er',
  'ir',
];

/**
 * Light Portuguese stemmer over a folded word: plural reduction, then one derivational suffix, then a final
 * vowel. Words of 3 letters or fewer, and words with digits, are kept as they are.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  let w = word;
  // Plurals.
  if (w.endsWith('oes') || w.endsWith('aes')) w = `${w.slice(0, -3)}ao`;
  else if (w.endsWith('ais')) w = `${w.slice(0, -3)}al`;
  else if (w.endsWith('eis')) w = `${w.slice(0, -3)}el`;
  else if (w.endsWith('ns')) w = `${w.slice(0, -2)}m`;
  else if (w.endsWith('res') || w.endsWith('zes') || w.endsWith('ses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  for (const suffix of SUFFIXES) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 4) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  if (w.length > 4 && /[aeo]$/.test(w)) w = w.slice(0, -1);
  return w;
}

/**
 * Synonym groups of the vocabulary of Brazilian municipal statistics (folded). Every word of a group maps
 * to the group's first word, so that a query and a definition that use different words of one group share
 * a feature. Written from the domain (IBGE, DATASUS, INEP, SNIS terms and their everyday paraphrases).
 */
const SYNONYM_GROUPS: readonly string[][] = [
  ['populacao', 'habitantes', 'moradores', 'residentes', 'pessoas', 'gente', 'demografica', 'demografia'],
  ['crescimento', 'aumento', 'variacao', 'evolucao', 'expansao'],
  ['mortalidade', 'obitos', 'mortes', 'morte', 'morreram', 'falecimentos'],
  ['nascidos', 'nascimentos', 'natalidade', 'bebes', 'recem'],
  ['infantil', 'criancas', 'crianca', 'bebes', 'menores'],
  ['idosos', 'velhos', 'terceira', 'envelhecimento', 'envelhecida'],
  ['educacao', 'ensino', 'escola', 'escolas', 'escolar', 'alunos', 'estudantes'],
  ['matriculas', 'matriculados', 'inscritos'],
  ['analfabetismo', 'analfabetos', 'alfabetizacao', 'ler', 'escrever'],
  ['desocupacao', 'desemprego', 'desempregados', 'desocupados'],
  ['emprego', 'empregos', 'trabalho', 'vagas', 'ocupacao', 'vinculos', 'carteira'],
  ['salario', 'salarios', 'remuneracao', 'ganho', 'ganham'],
  ['renda', 'rendimento', 'dinheiro', 'income'],
  ['pobreza', 'pobres', 'miseria', 'carencia'],
  ['desigualdade', 'gini', 'concentracao'],
  ['pib', 'produto', 'economia', 'riqueza'],
  ['saneamento', 'esgoto', 'sanitario', 'esgotamento'],
  ['agua', 'abastecimento', 'potavel', 'hidrica'],
  ['lixo', 'residuos', 'coleta', 'reciclagem', 'reciclaveis'],
  ['veiculos', 'carros', 'automoveis', 'frota', 'motos'],
  ['homicidios', 'assassinatos', 'violencia', 'mortes violentas', 'agressao'],
  ['seguranca', 'crime', 'crimes', 'criminalidade', 'policia'],
  ['roubos', 'furtos', 'assaltos'],
  ['transito', 'acidentes', 'atropelamentos'],
  ['desmatamento', 'desmatada', 'floresta', 'corte'],
  ['queimadas', 'incendios', 'fogo', 'calor'],
  ['emissoes', 'carbono', 'co2', 'poluicao', 'estufa'],
  ['receita', 'arrecadacao', 'arrecadado', 'impostos', 'tributos', 'tributaria'],
  ['despesa', 'gasto', 'gastos', 'custo', 'investimento', 'investimentos'],
  ['divida', 'endividamento', 'debito'],
  ['internet', 'banda', 'conexao', 'online'],
  ['celular', 'telefonia', 'movel', '4g', 'sinal'],
  ['saude', 'hospital', 'hospitalar', 'sus', 'medica'],
  ['medicos', 'doutores', 'profissionais'],
  ['leitos', 'internacao', 'internacoes', 'camas'],
  ['vacinacao', 'vacinal', 'vacinas', 'vacina', 'imunizacao', 'vacinados'],
  ['gravidez', 'gestantes', 'gestacao', 'gravidas', 'maternidade', 'maes', 'materna'],
  ['adolescencia', 'adolescentes', 'jovens'],
  ['suicidio', 'autoprovocadas', 'suicidios'],
  ['cardio', 'coracao', 'cardiovasculares', 'circulatorio', 'infarto'],
  ['dengue', 'mosquito', 'aedes'],
  ['densidade', 'povoamento', 'adensamento'],
  ['urbanizacao', 'urbana', 'urbano', 'cidades'],
  ['moradia', 'habitacao', 'habitacional', 'domicilios', 'casas', 'residencias', 'lares'],
  ['favelas', 'comunidades', 'subnormais'],
  ['energia', 'eletrica', 'luz', 'eletricidade'],
  ['soja', 'graos', 'lavoura'],
  ['gado', 'bovino', 'bois', 'rebanho', 'pecuaria', 'cabecas'],
  ['agricultura', 'agropecuaria', 'agro', 'rural', 'campo'],
  ['industria', 'industrial', 'fabricas'],
  ['servicos', 'comercio'],
  ['exportacoes', 'exportacao', 'vendas externas'],
  ['empresas', 'negocios', 'companhias', 'firmas'],
  ['beneficio', 'beneficiarios', 'auxilio', 'assistencia'],
  ['fome', 'alimentar', 'inseguranca', 'comida'],
  ['participacao', 'proporcao', 'percentual', 'parcela', 'fatia'],
  ['ranking', 'posicao', 'classificacao', 'ordem', 'colocacao'],
  ['estado', 'uf', 'estadual', 'unidade'],
  ['esperanca', 'expectativa', 'longevidade'],
  ['fecundidade', 'filhos', 'fertilidade'],
  ['professores', 'docentes', 'educadores'],
  ['abandono', 'evasao', 'desistencia'],
  ['creche', 'creches', 'educacao infantil'],
  ['pavimentacao', 'pavimentadas', 'asfalto', 'calcamento'],
  ['iluminacao', 'postes', 'luminarias'],
  ['arborizacao', 'arvores', 'verde'],
  ['conservacao', 'protegidas', 'reservas', 'parques'],
  ['vegetacao', 'mata', 'nativa', 'cobertura vegetal'],
];

const SYNONYMS: ReadonlyMap<string, string[]> = (() => {
  const map = new Map<string, string[]>();
  for (const group of SYNONYM_GROUPS) {
    const head = group[0];
    if (head === undefined) continue;
    for (const member of group) {
      if (member.includes(' ')) continue;
      // By word and by stem, so that inflected forms ("asfaltadas", "vacinadas") meet their group too.
      for (const key of new Set([fold(member), `~${stem(fold(member))}`])) {
        const heads = map.get(key) ?? [];
        if (!heads.includes(head)) heads.push(head);
        map.set(key, heads);
      }
    }
  }
  return map;
})();

/** The synonym-group heads of a folded word, matched as is or by stem (empty when it belongs to no group). */
export function synonymHeads(word: string): readonly string[] {
  return SYNONYMS.get(word) ?? SYNONYMS.get(`~${stem(word)}`) ?? [];
}

/** Folded content words of `text`: stop words removed, order kept. */
export function contentWords(text: string): string[] {
  return words(text).filter((w) => !STOP_WORDS.has(w));
}
