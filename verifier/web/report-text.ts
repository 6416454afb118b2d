/**
 * The report's texts in Portuguese. The checking core writes its summaries and evidence in English (the
 * command line's language, the same in every report); the page shows them in the reader's language by
 * matching each text against the sentences the core writes: an exact table for labels and fixed sentences,
 * then patterns whose variable parts (hashes, names, times, endpoints) are kept as they are. A text that
 * nothing matches (a library's own error message) is shown as it is, in English.
 */

/** A text of the report in Portuguese, and whether it was translated (false: shown in English). */
export interface Translated {
  text: string;
  translated: boolean;
}

type Rule = readonly [RegExp, (m: RegExpExecArray, tr: (s: string) => string) => string];

/** Labels and sentences the core writes as they are. */
const EXACT: Readonly<Record<string, string>> = {
  // Check 1 and 2 (verify.ts).
  'SHA-256': 'SHA-256',
  size: 'tamanho',
  'receipt.json attachment': 'anexo receipt.json',
  certificate: 'certificado',
  rule: 'regra',
  'recomputed root': 'raiz recalculada',
  'batch of one': 'lote de um',
  'not listed in the catalog /AF': 'não listado no /AF do catálogo',
  'separate: it does not embed the file (not a stamped PDF)':
    'separado: não contém o arquivo (não é um PDF carimbado)',
  'batch of one: the anchored root is the document hash itself':
    'lote de um: a raiz registrada é o próprio hash do documento',
  'the receipt has no Merkle proof (the service does not anchor)':
    'o recibo não tem prova de Merkle (o serviço não registra em blockchain)',
  'the receipt has no Merkle proof (the document is not in an anchoring batch yet)':
    'o recibo não tem prova de Merkle (o documento ainda não está em um lote de registro)',
  'not requested': 'não pedida',
  file: 'arquivo',
  receipt: 'recibo',
  // Check 3 (evm.ts).
  'merkle root': 'raiz de Merkle',
  attestation: 'atestação',
  endpoint: 'endpoint',
  answer: 'resposta',
  'chain id': 'chain id',
  'attestation exists': 'a atestação existe',
  'attestation.schema': 'attestation.schema',
  'attestation.attester': 'attestation.attester',
  'attestation.data (bytes32 merkleRoot)': 'attestation.data (bytes32 merkleRoot)',
  'not revoked': 'não revogada',
  'not expired': 'não expirada',
  'revocationTime 0': 'revocationTime 0',
  'no expiration': 'sem expiração',
  'SchemaRegistry.getSchema': 'SchemaRegistry.getSchema',
  'schema UID = keccak256(schema, resolver, revocable)':
    'UID do schema = keccak256(schema, resolver, revocable)',
  'EAS.getSchemaRegistry': 'EAS.getSchemaRegistry',
  'transaction receipt': 'recibo da transação',
  'transaction status': 'situação da transação',
  'transaction block': 'bloco da transação',
  'success (1)': 'sucesso (1)',
  'Attested event': 'evento Attested',
  confirmations: 'confirmações',
  'attestation.time = block timestamp': 'attestation.time = horário do bloco',
  'endpoints agree': 'os endpoints concordam',
  'endpoint unavailable': 'endpoint indisponível',
  'not checked': 'não conferido',
  'the receipt has no EVM anchor (the service does not anchor on EVM)':
    'o recibo não tem registro EVM (o serviço não registra em EVM)',
  'the receipt records the EVM anchor as pending': 'o recibo dá o registro EVM como pendente',
  'no --evm-rpc endpoint given': 'nenhum endpoint EVM (--evm-rpc) informado',
  'the receipt has an EVM anchor but no Merkle proof':
    'o recibo tem registro EVM mas não tem prova de Merkle',
  // Check 4 (stacks.ts).
  anchor: 'registro',
  network_id: 'network_id',
  'get-anchor': 'get-anchor',
  transaction: 'transação',
  tx_status: 'tx_status',
  block_height: 'block_height',
  'contract call': 'chamada ao contrato',
  'recorded height': 'altura registrada',
  success: 'sucesso',
  unknown: 'desconhecido',
  'the receipt has no Stacks anchor (the service does not anchor on Stacks)':
    'o recibo não tem registro na Stacks (o serviço não registra na Stacks)',
  'the receipt records the Stacks anchor as pending': 'o recibo dá o registro na Stacks como pendente',
  'no --stacks-api endpoint given': 'nenhum endpoint Stacks (--stacks-api) informado',
  'the receipt has a Stacks anchor but no Merkle proof':
    'o recibo tem registro na Stacks mas não tem prova de Merkle',
  // Check 5 (timestamp.ts).
  token: 'token',
  'message imprint': 'imprint da mensagem',
  genTime: 'genTime',
  'serial number': 'número de série',
  'TSA certificate': 'certificado da TSA',
  TSA: 'TSA',
  signature: 'assinatura',
  'signed contentType': 'contentType assinado',
  'signed messageDigest': 'messageDigest assinado',
  'ESS signing certificate': 'certificado de assinatura ESS',
  'extended key usage': 'uso estendido da chave',
  'chain to --tsa-ca': 'cadeia até as âncoras da TSA (--tsa-ca)',
  'chain to --trust-ca': 'cadeia até as âncoras do assinante (--trust-ca)',
  'genTime as recorded': 'genTime como registrado',
  'not base64': 'não é base64',
  valid: 'válida',
  invalid: 'inválida',
  absent: 'ausente',
  'id-ct-TSTInfo': 'id-ct-TSTInfo',
  'missing or not id-ct-TSTInfo': 'ausente ou diferente de id-ct-TSTInfo',
  'does not match the TSTInfo': 'não corresponde ao TSTInfo',
  'names the TSA certificate': 'nomeia o certificado da TSA',
  'names another certificate': 'nomeia outro certificado',
  'critical id-kp-timeStamping only': 'somente id-kp-timeStamping, crítico',
  'not exactly a critical id-kp-timeStamping': 'não é exatamente um id-kp-timeStamping crítico',
  'the token does not carry the certificate its SignerInfo names':
    'o token não traz o certificado que seu SignerInfo nomeia',
  'the receipt carries no RFC 3161 token (none was issued)':
    'o recibo não traz token RFC 3161 (nenhum foi emitido)',
  // Check 6 (pades.ts).
  signatures: 'assinaturas',
  original: 'original',
  'judged at': 'julgada em',
  ByteRange: 'ByteRange',
  'later revisions': 'revisões posteriores',
  SubFilter: 'SubFilter',
  Filter: 'Filter',
  M: 'M',
  CMS: 'CMS',
  'signer certificate': 'certificado do assinante',
  signer: 'assinante',
  'signing-certificate-v2': 'signing-certificate-v2',
  'signature policy': 'política de assinatura',
  DSS: 'DSS',
  none: 'nenhum',
  'id-data': 'id-data',
  'missing or not id-data': 'ausente ou diferente de id-data',
  'differs from the digest of the signed ranges': 'difere do resumo dos intervalos assinados',
  'names the signer certificate': 'nomeia o certificado do assinante',
  'signature timestamp': 'carimbo do tempo da assinatura',
  'none (PAdES B-B)': 'nenhum (PAdES B-B)',
  'PAdES level': 'nível PAdES',
  'no --certificate given': 'nenhum certificado informado',
  'the certificate is not signed': 'o certificado não é assinado',
  'the certificate carries document timestamps but no signature':
    'o certificado traz carimbos do documento mas nenhuma assinatura',
  'the CMS does not carry the certificate its SignerInfo names':
    'o CMS não traz o certificado que seu SignerInfo nomeia',
  'does not end where a revision ends': 'não termina onde termina uma revisão',
  'no valid signature timestamp': 'nenhum carimbo do tempo de assinatura válido',
  'no valid document timestamp': 'nenhum carimbo do tempo de documento válido',
  'the signature does not verify': 'a assinatura não confere',
  'a certificate, timestamp or later revision does not hold at the time judged':
    'um certificado, carimbo ou revisão posterior não se sustenta na data julgada',
  'no valid path': 'nenhum caminho válido',
  'not valid': 'não válido',
  'every certificate': 'todos os certificados',
  'too many revocation look-ups': 'consultas de revogação demais',
};

/** Pieces that recur inside the patterns' variable parts. */
const WORDS: Readonly<Record<string, string>> = {
  signer: 'assinante',
  TSA: 'TSA',
};

const RULES: readonly Rule[] = [
  // Composite summaries and labels (report.ts CheckBuilder, pades.ts prefixes).
  [/^failed: (.+)$/s, (m, tr) => `falhou: ${list(m[1], tr)}`],
  [/^(.*); not checked: (.+)$/s, (m, tr) => `${tr(m[1] ?? '')}; não conferido: ${list(m[2], tr)}`],
  [/^no endpoint answered: (.+)$/s, (m, tr) => `nenhum endpoint respondeu: ${list(m[1], tr)}`],
  [/^no answer from (.+)$/s, (m, tr) => `sem resposta de ${list(m[1], tr)}`],
  [/^(.+) \((.+)\)$/s, (m, tr) => (isData(m[1] ?? '') ? `${m[1]} (${tr(m[2] ?? '')})` : NO_MATCH)],
  [/^document timestamp (\d+ \d+ R): (.+)$/s, (m, tr) => `carimbo do documento ${m[1]}: ${tr(m[2] ?? '')}`],
  [/^signature timestamp: (.+)$/s, (m, tr) => `carimbo da assinatura: ${tr(m[1] ?? '')}`],
  [
    /^(signer|TSA) (revocation|status)$/,
    (m) => `${m[2] === 'status' ? 'situação' : 'revogação'} (${WORDS[m[1] ?? ''] ?? m[1]})`,
  ],
  [/^not (B-B|B-T|B-LT|B-LTA)$/, (m) => `não ${m[1]}`],
  [
    /^the (signer|TSA) certificate chain \(no (--trust-ca|--tsa-ca) given\)$/,
    (m) => `a cadeia do certificado (${WORDS[m[1] ?? ''] ?? m[1]}): nenhuma âncora (${m[2]}) escolhida`,
  ],
  // Check 1.
  [
    /^([0-9a-f]{64}) of (\d+) bytes \(receipt ([0-9a-f]{64})\)$/,
    (m) => `${m[1]} de ${m[2]} bytes (recibo ${m[3]})`,
  ],
  [/^(\d+) bytes \(receipt (\d+)\)$/, (m) => `${m[1]} bytes (recibo ${m[2]})`],
  [
    /^in \/EmbeddedFiles and \/AF, AFRelationship (\S+)$/,
    (m) => `em /EmbeddedFiles e /AF, AFRelationship ${m[1] === 'absent' ? 'ausente' : m[1]}`,
  ],
  [
    /^stamped: its first (\d+) bytes are exactly the file$/,
    (m) => `carimbado: seus primeiros ${m[1]} bytes são exatamente o arquivo`,
  ],
  [
    /^the file is the notarized one \(SHA-256 ([0-9a-f]+…)\)$/,
    (m) => `o arquivo é o notarizado (SHA-256 ${m[1]})`,
  ],
  // Check 2.
  [
    /^(\S+): leaf SHA-256\(0x00\|\|h\), node SHA-256\(0x01\|\|l\|\|r\); leaf (\d+) of (\d+)$/,
    (m) => `${m[1]}: folha SHA-256(0x00||h), nó SHA-256(0x01||e||d); folha ${m[2]} de ${m[3]}`,
  ],
  [
    /^(\S+) \(receipt root (\S+)\) from (\d+) siblings?$/,
    (m) => `${m[1]} (raiz do recibo ${m[2]}) a partir de ${m[3]} irmão(s)`,
  ],
  [
    /^a proof without siblings needs leafCount 1 \(receipt (\d+)\)$/,
    (m) => `uma prova sem irmãos exige leafCount 1 (recibo ${m[1]})`,
  ],
  [
    /^the proof recomputes the root of a batch of (\d+)$/,
    (m) => `a prova recalcula a raiz de um lote de ${m[1]}`,
  ],
  // Check 3.
  [
    /^(\S+) on (.+) \(chain (\d+)\) at EAS (\S+)$/,
    (m) => `${m[1]} em ${m[2]} (chain ${m[3]}) no EAS ${m[4]}`,
  ],
  [
    /^(.+) \(receipt (root )?(.+)\)$/s,
    (m) => (isData(m[1] ?? '') ? `${m[1]} (recibo${m[2] ? ': raiz' : ''} ${m[3]})` : NO_MATCH),
  ],
  [/^no attestation (\S+)$/, (m) => `nenhuma atestação ${m[1]}`],
  [/^revoked at (\S+)$/, (m) => `revogada em ${m[1]}`],
  [/^expires (\S+)$/, (m) => `expira em ${m[1]}`],
  [/^no receipt for (\S+)$/, (m) => `nenhum recibo de transação para ${m[1]}`],
  [/^reverted \((\S+)\)$/, (m) => `revertida (${m[1]})`],
  [
    /^(\d+) \(at least (\d+) required; tip (\d+)\)$/,
    (m) => `${m[1]} (exigidas ao menos ${m[2]}; topo ${m[3]})`,
  ],
  [/^(\S+) \(block (.+)\)$/, (m) => `${m[1]} (bloco ${m[2] === 'unknown' ? 'desconhecido' : m[2]})`],
  [/^(\S+) reads what (\S+) reads$/, (m) => `${m[1]} lê o mesmo que ${m[2]}`],
  [
    /^(\d+) confirmations at (\S+) \((\d+) so far\)$/,
    (m) => `${m[1]} confirmações em ${m[2]} (${m[3]} até agora)`,
  ],
  [
    /^attestation (\S+) holds the root, by (\S+), at (.+) \((.+)\)$/s,
    (m, tr) => `a atestação ${m[1]} guarda a raiz, por ${m[2]}, em ${m[3]} (${tr(m[4] ?? '')})`,
  ],
  [/^one endpoint$/, () => 'um endpoint'],
  [/^(\d+) endpoints agree$/, (m) => `${m[1]} endpoints concordam`],
  [
    /^serves chain (\d+), not the receipt's chain (\d+) \((.+)\)$/,
    (m) => `serve a chain ${m[1]}, não a do recibo, ${m[2]} (${m[3]})`,
  ],
  [/^unreachable: (.+)$/s, (m) => `inalcançável: ${m[1]}`],
  [/^(\S+): unreachable: (.+)$/s, (m) => `${m[1]}: inalcançável: ${m[2]}`],
  [/^(\S+): HTTP (\d+)(.*)$/s, (m) => `${m[1]}: HTTP ${m[2]}${m[3]}`],
  [
    /^HTTP (\d+): redirects are not followed \(ask the final endpoint directly\)$/,
    (m) => `HTTP ${m[1]}: redirecionamentos não são seguidos (consulte diretamente o endpoint final)`,
  ],
  [/^HTTP (\d+), not JSON: (.*)$/s, (m) => `HTTP ${m[1]}, não é JSON: ${m[2]}`],
  [
    /^(\S+): not a JSON-RPC response( \(no result\))?$/,
    (m) => `${m[1]}: não é uma resposta JSON-RPC${m[2] ? ' (sem result)' : ''}`,
  ],
  // Check 4.
  [
    /^\(get-anchor (\S+)\) on (\S+) \((\S+)\), tx (\S+)$/,
    (m) => `(get-anchor ${m[1]}) em ${m[2]} (${m[3]}), tx ${m[4]}`,
  ],
  [
    /^(unknown|0x[0-9a-f]+) \(receipt (\S+): (0x[0-9a-f]+)\)$/,
    (m) => `${m[1] === 'unknown' ? 'desconhecido' : m[1]} (recibo ${m[2]}: ${m[3]})`,
  ],
  [/^unknown to this endpoint: (\S+)$/, (m) => `desconhecida por este endpoint: ${m[1]}`],
  [
    /^(u\d+), no later than the transaction's block (\d+)$/,
    (m) => `${m[1]}, não depois do bloco da transação, ${m[2]}`,
  ],
  [
    /^the root is on record in (\S+) since block (\S+) \((.+)\)$/s,
    (m, tr) => `a raiz está registrada em ${m[1]} desde o bloco ${m[2]} (${tr(m[3] ?? '')})`,
  ],
  [/^none: the root is not on record$/, () => 'nenhum: a raiz não está registrada'],
  // Check 5.
  [/^does not parse: (.+)$/s, (m) => `não pôde ser lido: ${m[1]}`],
  [/^SHA-256 (\S+) \((.+) (\S+)\)$/, (m, tr) => `SHA-256 ${m[1]} (${tr(m[2] ?? '')} ${m[3]})`],
  [/^document SHA-256$/, () => 'SHA-256 do documento'],
  [/^SHA-256 of its byte ranges$/, () => 'SHA-256 de seus intervalos de bytes'],
  [/^SHA-256 of the signature value$/, () => 'SHA-256 do valor da assinatura'],
  [/^(SHA-\d+) of the TSTInfo$/, (m) => `${m[1]} do TSTInfo`],
  [/^(SHA-\d+) of the signed ranges$/, (m) => `${m[1]} dos intervalos assinados`],
  [/^trusted at (\S+)$/, (m) => `confiável em ${m[1]}`],
  [
    /^trusted at (\S+), proven by a timestamp \(at (\S+): (.+)\)$/s,
    (m, tr) => `confiável em ${m[1]}, provado por um carimbo do tempo (em ${m[2]}: ${tr(m[3] ?? '')})`,
  ],
  [
    /^the document's SHA-256 existed at (\S+) \(RFC 3161\)$/,
    (m) => `o SHA-256 do documento existia em ${m[1]} (RFC 3161)`,
  ],
  // Check 6.
  [
    /^(\d+) signatures? of the notarized PDF, not judged here$/,
    (m) => `${m[1]} assinatura(s) do PDF notarizado, não julgada(s) aqui`,
  ],
  [
    /^\[0 (\d+) (\d+) (\d+)\]: the whole file but the \/Contents signature string$/,
    (m) => `[0 ${m[1]} ${m[2]} ${m[3]}]: o arquivo inteiro menos a string /Contents da assinatura`,
  ],
  [
    /^\[0 (\d+) (\d+) (\d+)\]: the whole file but the \/Contents signature string up to its revision \((\d+) bytes added after\)$/,
    (m) =>
      `[0 ${m[1]} ${m[2]} ${m[3]}]: o arquivo inteiro menos a string /Contents da assinatura até a sua revisão (${m[4]} bytes acrescentados depois)`,
  ],
  [
    /^add (\d+) objects \(validation data, document timestamps\)(; update (.+))?$/,
    (m) =>
      `acrescentam ${m[1]} objetos (dados de validação, carimbos do documento)${m[3] ? `; atualizam ${m[3]}` : ''}`,
  ],
  [/^change what was signed: (.+)$/s, (m) => `mudam o que foi assinado: ${m[1]}`],
  [
    /^(\d+) certificates, (\d+) OCSP responses, (\d+) CRLs, (\d+) VRI entries$/,
    (m) => `${m[1]} certificados, ${m[2]} respostas OCSP, ${m[3]} LCRs, ${m[4]} entradas VRI`,
  ],
  [/^(.+) \(not ETSI\.RFC3161\)$/, (m) => `${m[1]} (não é ETSI.RFC3161)`],
  [
    /^(.+): good at (\S+) \((OCSP|CRL)([^)]*), thisUpdate (\S+)\)$/s,
    (m) => `${m[1]}: válido em ${m[2]} (${m[3]}${m[4]}, thisUpdate ${m[5]})`,
  ],
  [
    /^(.+): not revoked as of (\S+) \((.+)\), nothing newer for (\S+)$/s,
    (m) => `${m[1]}: não revogado até ${m[2]} (${m[3]}), nada mais recente para ${m[4]}`,
  ],
  [/^(.+): revoked at (\S+)(.*)$/s, (m) => `${m[1]}: revogado em ${m[2]}${m[3]}`],
  [/^(.+): unknown \((.+)\)$/s, (m, tr) => `${m[1]}: desconhecido (${tr(m[2] ?? '')})`],
  [/^no revocation data in the \/DSS for (.+)$/s, (m) => `sem dados de revogação no /DSS para ${m[1]}`],
  [
    /^document timestamp (\d+ \d+ R) covers no revocation data for (.+)$/s,
    (m) => `o carimbo do documento ${m[1]} não cobre dados de revogação para ${m[2]}`,
  ],
  [/^SubFilter (.+) is not a PAdES baseline one$/, (m) => `SubFilter ${m[1]} não é de um nível básico PAdES`],
  [
    /^signed by (.+?)( at (\S+))?, covering (the whole file|its revision) \(SHA-256 (\S+) of the signed ranges\), (B-B|B-T|B-LT|B-LTA|no) level at (\S+)$/s,
    (m) =>
      `assinado por ${m[1]}${m[3] ? ` em ${m[3]}` : ''}, cobrindo ${m[4] === 'the whole file' ? 'o arquivo inteiro' : 'a sua revisão'} ` +
      `(SHA-256 ${m[5]} dos intervalos assinados), ${m[6] === 'no' ? 'nenhum' : m[6]} nível em ${m[7]}`,
  ],
  [
    /^no signature covers the file up to its end \((\d+) bytes\): bytes were added after signing \((\d+) bytes after the last %%EOF\)$/,
    (m) =>
      `nenhuma assinatura cobre o arquivo até o fim (${m[1]} bytes): bytes foram acrescentados depois da assinatura (${m[2]} bytes depois do último %%EOF)`,
  ],
  [/^(.+) \(no issuer in the file\)$/, (m) => `${m[1]} (sem emissor no arquivo)`],
  [/^a trust anchor does not parse: (.+)$/s, (m) => `uma âncora de confiança não pôde ser lida: ${m[1]}`],
];

/** A rule's way of saying it does not apply after all (its pattern matched too widely). */
const NO_MATCH = '\u0000';

/**
 * Text that is only data (hashes, numbers, times, addresses, URLs, OIDs, Clarity values): the same in any
 * language.
 */
function isData(text: string): boolean {
  const words = text
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/\b0x[0-9a-fA-F]+\b/g, ' ')
    .replace(/\b\d{4}-\d{2}-\d{2}T[\d:.]+Z\b/g, ' ')
    .match(/[A-Za-z]{3,}/g);
  return (
    words === null || words.every((w) => /^[0-9a-fA-F]+$/.test(w) || /^(SHA|OCSP|CRL|EAS|TSA|RFC)$/.test(w))
  );
}

function list(text: string | undefined, tr: (s: string) => string): string {
  return (text ?? '')
    .split('; ')
    .map((part) => tr(part))
    .join('; ');
}

/**
 * `text`, a summary, label or value of a report, in Portuguese: translated when the table or a pattern
 * knows it (variable parts kept), else as it is with `translated` false.
 */
export function toPortuguese(text: string): Translated {
  let complete = true;
  const tr = (s: string): string => {
    const exact = EXACT[s];
    if (exact !== undefined) return exact;
    if (isData(s)) return s;
    for (const [pattern, render] of RULES) {
      const m = pattern.exec(s);
      if (!m) continue;
      const out = render(m, tr);
      if (out !== NO_MATCH) return out;
    }
    complete = false;
    return s;
  };
  const out = tr(text);
  return { text: out, translated: complete };
}
