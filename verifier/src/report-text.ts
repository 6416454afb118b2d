/**
 * The report's texts in Portuguese. The checking core writes its summaries and evidence in English (the
 * command line's language; every report the same), and the page shows them in the reader's language:
 * 1. labels and fixed sentences from a table;
 * 2. the sentences the core writes with variable parts, as patterns (the variable parts translated in turn
 *    when they are text, kept when they are data);
 * 3. anything else phrase by phrase: the data in it (hashes, times, names of certificates, URLs, addresses,
 *    technical identifiers) is kept, known phrases are replaced, and the text counts as translated only when
 *    no English word is left. A text nothing matches (a library's own error message) is shown in English.
 */

/** A text of the report in Portuguese, and whether all of it was translated (false: some English left). */
export interface Translated {
  text: string;
  translated: boolean;
}

type Tr = (s: string) => string;
type Rule = readonly [RegExp, (m: RegExpExecArray, tr: Tr) => string];

/** Labels and sentences the core writes as they are. */
const EXACT: Readonly<Record<string, string>> = {
  // Sources and common labels.
  file: 'arquivo',
  receipt: 'recibo',
  certificate: 'certificado',
  endpoint: 'endpoint',
  answer: 'resposta',
  'endpoint unavailable': 'endpoint indisponível',
  'not checked': 'não conferido',
  'not requested': 'não pedida',
  'endpoints agree': 'os endpoints concordam',
  confirmations: 'confirmações',
  none: 'nenhum',
  unknown: 'desconhecido',
  absent: 'ausente',
  present: 'presente',
  valid: 'válida',
  invalid: 'inválida',
  success: 'sucesso',
  // Check 1 and 2 (verify.ts).
  size: 'tamanho',
  'receipt.json attachment': 'anexo receipt.json',
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
  '(malformed proof)': '(prova malformada)',
  // Check 3 (evm.ts).
  'merkle root': 'raiz de Merkle',
  attestation: 'atestação',
  'chain id': 'chain id',
  'attestation exists': 'a atestação existe',
  'not revoked': 'não revogada',
  'not expired': 'não expirada',
  'no expiration': 'sem expiração',
  'schema UID = keccak256(schema, resolver, revocable)':
    'UID do schema = keccak256(schema, resolver, revocable)',
  'transaction receipt': 'recibo da transação',
  'transaction status': 'situação da transação',
  'transaction block': 'bloco da transação',
  'success (1)': 'sucesso (1)',
  'Attested event': 'evento Attested',
  'attestation.time = block timestamp': 'attestation.time = horário do bloco',
  'the receipt has no EVM anchor (the service does not anchor on EVM)':
    'o recibo não tem registro EVM (o serviço não registra em EVM)',
  'the receipt records the EVM anchor as pending': 'o recibo dá o registro EVM como pendente',
  'no --evm-rpc endpoint given': 'nenhum endpoint EVM (--evm-rpc) informado',
  'the receipt has an EVM anchor but no Merkle proof':
    'o recibo tem registro EVM mas não tem prova de Merkle',
  '1 endpoint read': '1 endpoint lido',
  // Check 4 (stacks.ts).
  anchor: 'registro',
  transaction: 'transação',
  canonical: 'canônica',
  'contract call': 'chamada ao contrato',
  'recorded height': 'altura registrada',
  'in a block of the canonical chain': 'em um bloco da cadeia canônica',
  'not in a block of the canonical chain': 'fora da cadeia canônica',
  'none: the root is not recorded': 'nenhum: a raiz não está registrada',
  'none: the root is not on record': 'nenhum: a raiz não está registrada',
  'a stacks-node without a transaction index': 'um stacks-node sem índice de transações',
  'a stacks-node (RPC only)': 'um stacks-node (só RPC)',
  'the receipt has no Stacks anchor (the service does not anchor on Stacks)':
    'o recibo não tem registro na Stacks (o serviço não registra na Stacks)',
  'the receipt records the Stacks anchor as pending': 'o recibo dá o registro na Stacks como pendente',
  'no --stacks-api endpoint given': 'nenhum endpoint Stacks (--stacks-api) informado',
  'the receipt has a Stacks anchor but no Merkle proof':
    'o recibo tem registro na Stacks mas não tem prova de Merkle',
  '(arguments not answered)': '(argumentos não informados)',
  // Check 5 (timestamp.ts).
  token: 'token',
  'message imprint': 'imprint da mensagem',
  'serial number': 'número de série',
  'TSA certificate': 'certificado da TSA',
  signature: 'assinatura',
  'signed contentType': 'contentType assinado',
  'signed messageDigest': 'messageDigest assinado',
  'ESS signing certificate': 'certificado de assinatura ESS',
  'extended key usage': 'uso estendido da chave',
  'chain to --tsa-ca': 'cadeia até as âncoras da TSA (--tsa-ca)',
  'chain to --trust-ca': 'cadeia até as âncoras do assinante (--trust-ca)',
  'genTime as recorded': 'genTime como registrado',
  'not base64': 'não é base64',
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
  'document SHA-256': 'SHA-256 do documento',
  'SHA-256 of its byte ranges': 'SHA-256 de seus intervalos de bytes',
  'SHA-256 of the signature value': 'SHA-256 do valor da assinatura',
  // Check 6 (pades/).
  signatures: 'assinaturas',
  original: 'original',
  'judged at': 'julgada em',
  'later revisions': 'revisões posteriores',
  // PDF names as labels (ISO 32000-1 12.8.1: the signature dictionary's /Filter and /M).
  Filter: 'Filter',
  M: 'M',
  'signer certificate': 'certificado do assinante',
  signer: 'assinante',
  'signature policy': 'política de assinatura',
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
  'no anchor': 'nenhuma âncora',
  'not valid': 'não válido',
  'every certificate': 'todos os certificados',
  'too many revocation look-ups': 'consultas de revogação demais',
  'not both': 'não ambos',
  // Web captures (wacz/): property names of the archive's JSON stay as they are.
  path: 'path',
  hash: 'hash',
  format: 'format',
  created: 'created',
  form: 'forma',
  domain: 'domínio',
  'anonymous (publicKey)': 'anônima (publicKey)',
  'domain (domainCert)': 'de domínio (domainCert)',
  'public key SHA-256': 'SHA-256 da chave pública',
  'certificate SHA-256': 'SHA-256 do certificado',
  'signature over hash': 'assinatura sobre o hash',
  'valid (ECDSA, SHA-256)': 'válida (ECDSA, SHA-256)',
  'valid with the first certificate of domainCert': 'válida com o primeiro certificado de domainCert',
  'not a data package (no resources list)': 'não é um data package (sem a lista resources)',
  'is in the zip more than once': 'está no zip mais de uma vez',
  'listed but not in the archive': 'listado, mas ausente do WACZ',
  'in the archive but not listed in datapackage.json (no hash covers it)':
    'no WACZ, mas não listado em datapackage.json (nenhum hash o cobre)',
  'absent: the archive is not signed': 'ausente: o WACZ não é assinado',
  'not a digest (path, hash)': 'não é um resumo (path, hash)',
  'the anonymous form has no time signature': 'a forma anônima não tem carimbo do tempo',
  'no valid signedData to take the signer from': 'nenhum signedData válido de onde tirar o assinante',
  'no valid signedData to take the time signature from':
    'nenhum signedData válido de onde tirar o carimbo do tempo',
  'none was made (no TSA configured)': 'nenhum foi feito (nenhuma TSA configurada)',
  'no certificate': 'nenhum certificado',
  'not signed by the next certificate': 'não assinado pelo certificado seguinte',
  'valid at signing': 'válido na assinatura',
  'the domain certificate chain (no --trust-ca given)':
    'a cadeia do certificado de domínio: nenhuma âncora --trust-ca escolhida',
  'TSA status': 'situação da TSA',
  granted: 'concedido',
  'SHA-256 of signature': 'SHA-256 de signature',
  'first certificate of timestampCert': 'primeiro certificado de timestampCert',
  'the TSA that signed': 'a TSA que assinou',
  'created within 10 minutes of genTime': 'created a até 10 minutos do genTime',
  'no WARC file or no CDXJ index listed in datapackage.json':
    'nenhum arquivo WARC ou nenhum índice CDXJ listado em datapackage.json',
  'more records': 'mais registros',
  'fail; only the first are listed': 'falham; só os primeiros são listados',
  'WARC-Block-Digest does not match its block': 'WARC-Block-Digest não corresponde ao seu bloco',
  'WARC-Payload-Digest does not match its payload': 'WARC-Payload-Digest não corresponde ao seu conteúdo',
  'no capture/capture.json: not a web capture of this service':
    'sem capture/capture.json: não é uma captura web deste serviço',
  'not an object': 'não é um objeto',
  unreadable: 'ilegível',
  'capture record': 'registro da captura',
  'requested URL': 'endereço pedido',
  'final URL': 'endereço final',
  captured: 'capturado',
  'server address': 'endereço do servidor',
  'main document TLS certificate': 'certificado TLS do documento principal',
  'final URL archived': 'endereço final arquivado',
  'a response record in the index': 'um registro response no índice',
  'no response record in the index': 'nenhum registro response no índice',
  'signature form as recorded': 'forma da assinatura como registrada',
  'key as recorded': 'chave como registrada',
  'certificate as recorded': 'certificado como registrado',
  'time signature as recorded': 'carimbo do tempo como registrado',
  'the record says nothing of the signature (made before archives were signed)':
    'o registro nada diz da assinatura (feito antes de os WACZ serem assinados)',
  'not a WACZ: no datapackage.json': 'não é um WACZ: sem datapackage.json',
  'invalid gzip data': 'dados gzip inválidos',
};

/** The forms of a WACZ signature, and what a capture record says of its time signature. */
const WACZ_WORD: Readonly<Record<string, string>> = {
  anonymous: 'anônima',
  domain: 'de domínio',
  included: 'incluído',
  unavailable: 'indisponível',
  'not said': 'não dito',
};

/** How a technical word that stands for a role reads. */
const ROLE: Readonly<Record<string, string>> = { signer: 'assinante', TSA: 'TSA' };

/** Sentences with variable parts; the first that matches and renders (not `NO_MATCH`) wins. */
const RULES: readonly Rule[] = [
  // Composites (report.ts CheckBuilder, pades/ prefixes).
  [/^failed: (.+)$/s, (m, tr) => `falhou: ${list(m[1], tr)}`],
  [/^(.*); not checked: (.+)$/s, (m, tr) => `${tr(m[1] ?? '')}; não conferido: ${list(m[2], tr)}`],
  [/^no endpoint answered: (.+)$/s, (m, tr) => `nenhum endpoint respondeu: ${list(m[1], tr)}`],
  [/^no answer from (.+)$/s, (m, tr) => `sem resposta de ${list(m[1], tr)}`],
  [/^document timestamp (\d+ \d+ R): (.+)$/s, (m, tr) => `carimbo do documento ${m[1]}: ${tr(m[2] ?? '')}`],
  [/^signature timestamp: (.+)$/s, (m, tr) => `carimbo da assinatura: ${tr(m[1] ?? '')}`],
  [
    /^(signer|TSA) (revocation|status)$/,
    (m) => `${m[2] === 'status' ? 'situação' : 'revogação'} (${role(m[1])})`,
  ],
  [/^not (B-B|B-T|B-LT|B-LTA)$/, (m) => `não ${m[1]}`],
  [
    /^the (signer|TSA) certificate chain \(no (--trust-ca|--tsa-ca) given\)$/,
    (m) => `a cadeia do certificado (${role(m[1])}): nenhuma âncora ${m[2]} escolhida`,
  ],
  [
    /^the TSA certificate chain \(no --tsa-ca given\)$/,
    () => 'a cadeia do certificado da TSA: nenhuma âncora --tsa-ca escolhida',
  ],
  // Web captures (wacz/).
  [
    /^the (\d+) files listed in datapackage\.json have their SHA-256 and size$/,
    (m) => `os ${m[1]} arquivos listados em datapackage.json têm seu SHA-256 e tamanho`,
  ],
  [
    /^(\S+), (\d+) bytes \(listed (\S+), (\d+) bytes\)$/,
    (m) => `${m[1]}, ${m[2]} bytes (listado ${m[3]}, ${m[4]} bytes)`,
  ],
  [/^hash (.+): only sha256:<hex> is read$/, (m) => `hash ${m[1]}: só sha256:<hex> é lido`],
  [/^(.+) \(datapackage\.json is (\S+)\)$/, (m) => `${m[1]} (datapackage.json é ${m[2]})`],
  [
    /^datapackage-digest\.json and signedData hold the SHA-256 of datapackage\.json \((\S+)\)$/,
    (m) => `datapackage-digest.json e signedData trazem o SHA-256 de datapackage.json (${m[1]})`,
  ],
  [
    /^signedData is signed \((\S+) form\) over its hash$/,
    (m) => `signedData é assinado (forma ${WACZ_WORD[m[1] ?? ''] ?? m[1]}) sobre o seu hash`,
  ],
  [
    /^neither of the spec's forms \(anonymous, domain\) or a property outside them: (.*)$/s,
    (m) => `nenhuma das formas da especificação (anonymous, domain), ou uma propriedade fora delas: ${m[1]}`,
  ],
  [
    /^anonymous signature: the key is known only by its fingerprint \(public key SHA-256 (\S+)\); compare it with the one the service's certificate of this capture gives$/,
    (m) =>
      `assinatura anônima: a chave é conhecida só pela sua impressão digital (SHA-256 da chave pública ${m[1]}); ` +
      'compare-a com a que o certificado do serviço para esta captura informa',
  ],
  [
    /^the archive is signed without time signature: (.+); its signing time rests on created \((.*)\) alone$/s,
    (m, tr) =>
      `o WACZ é assinado sem carimbo do tempo: ${tr(m[1] ?? '')}; sua hora de assinatura depende só de created (${m[2]})`,
  ],
  [
    /^the TSA was unavailable at capture time \((.*)\), as capture\.json says$/s,
    (m, tr) => `a TSA estava indisponível na hora da captura (${tr(m[1] ?? '')}), como diz capture.json`,
  ],
  [
    /^the signature existed at (\S+) \(RFC 3161\), created (\S+)$/,
    (m) => `a assinatura existia em ${m[1]} (RFC 3161), created ${m[2]}`,
  ],
  [/^not granted \((\S+)\)$/, (m) => `não concedido (${m[1]})`],
  [/^(.+), not the TSA that signed$/s, (m) => `${m[1]}, não a TSA que assinou`],
  [/^created (\S+), genTime (\S+) \((-?\d+) s\)$/, (m) => `created ${m[1]}, genTime ${m[2]} (${m[3]} s)`],
  [
    /^(\S+) \(certificate: (.+)\)$/s,
    (m) => `${m[1]} (certificado: ${m[2] === 'no name' ? 'sem nome' : m[2]})`,
  ],
  [/^issued by the next \((.+)\)$/s, (m) => `emitido pelo seguinte (${m[1]})`],
  [/^not a date: (.*)$/s, (m) => `não é uma data: ${m[1]}`],
  [/^(\S+) \(valid (\S+) to (\S+)\)$/, (m) => `${m[1]} (válido de ${m[2]} a ${m[3]})`],
  [/^(.+): same public key as domainCert$/s, (m) => `${m[1]}: mesma chave pública que domainCert`],
  [/^signed by (\S+)$/, (m) => `assinado por ${m[1]}`],
  [
    /^(\d+) indexed records match their recordDigest, URL and digests; (\d+) other records \(warcinfo, requests\) their block digests$/,
    (m) =>
      `${m[1]} registros indexados conferem com seu recordDigest, URL e resumos; ${m[2]} outros registros ` +
      '(warcinfo, requests), com seus resumos de bloco',
  ],
  [
    /^(\d+) bytes: (\d+) indexed records and the records between them cover it$/,
    (m) => `${m[1]} bytes: ${m[2]} registros indexados e os registros entre eles o cobrem`,
  ],
  // A record by its WARC-Type (an identifier of the format, kept): `archive/x.warc.gz request https://…`.
  [
    /^(\S+) (warcinfo|request|response|revisit|resource|metadata|conversion|continuation)( \S+)?$/,
    (m) => (isData(m[1] ?? '') && isData(m[3] ?? '') ? m[0] : NO_MATCH),
  ],
  [/^(\S+) bytes (\d+) to (\d+)$/, (m) => `${m[1]} bytes ${m[2]} a ${m[3]}`],
  [
    /^a (response|revisit) record outside the index \(bytes (\d+) to (\d+)\)$/,
    (m) => `um registro ${m[1]} fora do índice (bytes ${m[2]} a ${m[3]})`,
  ],
  [/^not WARC records: (.+)$/s, (m, tr) => `não são registros WARC: ${tr(m[1] ?? '')}`],
  [/^not one WARC record: (.+)$/s, (m, tr) => `não é um único registro WARC: ${tr(m[1] ?? '')}`],
  [/^(\d+) records where the index has one$/, (m) => `${m[1]} registros onde o índice tem um`],
  [/^no WARC header end after byte (\d+)$/, (m) => `sem fim de cabeçalho WARC depois do byte ${m[1]}`],
  [/^not a WARC record at byte (\d+)$/, (m) => `não é um registro WARC no byte ${m[1]}`],
  [
    /^record at byte (\d+): (no Content-Length|shorter than its Content-Length|no CRLF CRLF after its block)$/,
    (m) =>
      `registro no byte ${m[1]}: ` +
      (m[2] === 'no Content-Length'
        ? 'sem Content-Length'
        : m[2] === 'shorter than its Content-Length'
          ? 'menor que o seu Content-Length'
          : 'sem CRLF CRLF depois do seu bloco'),
  ],
  [/^more than (\d+) bytes once decompressed$/, (m) => `mais de ${m[1]} bytes depois de descomprimido`],
  [
    /^offset and length outside the file or overlapping the previous record \(file (\d+) bytes\)$/,
    (m) => `offset e length fora do arquivo ou sobre o registro anterior (arquivo de ${m[1]} bytes)`,
  ],
  [
    /^recordDigest (\S+), the record's bytes are (\S+)$/,
    (m) => `recordDigest ${m[1]}, os bytes do registro são ${m[2]}`,
  ],
  [/^the record is of (.+)$/s, (m) => `o registro é de ${m[1] === 'no URL' ? 'nenhuma URL' : m[1]}`],
  [/^index digest (\S+), the payload is (\S+)$/, (m) => `digest do índice ${m[1]}, o conteúdo é ${m[2]}`],
  [/^(.+): no recordDigest in the index$/s, (m) => `${m[1]}: sem recordDigest no índice`],
  [/^does not decompress: (.+)$/s, (m, tr) => `não descomprime: ${tr(m[1] ?? '')}`],
  [/^more than (\d+) lines$/, (m) => `mais de ${m[1]} linhas`],
  [/^not a CDXJ line: (.*)$/s, (m) => `não é uma linha CDXJ: ${m[1]}`],
  [/^line names a WARC not in the archive: (.*)$/s, (m) => `a linha nomeia um WARC ausente do WACZ: ${m[1]}`],
  [/^capture of (\S+) at (\S+)$/, (m) => `captura de ${m[1]} em ${m[2]}`],
  [
    /^(.+); issuer (.+); valid (\S+) to (\S+); SHA-256 (\S+)$/s,
    (m) => `${m[1]}; emissor ${m[2]}; válido de ${m[3]} a ${m[4]}; SHA-256 ${m[5]}`,
  ],
  [/^(\d{4}-\S+) to (\d{4}-\S+)$/, (m) => `${m[1]} a ${m[2]}`],
  [
    /^(\S+) \(signedData: (\S+)\)$/,
    (m) => `${WACZ_WORD[m[1] ?? ''] ?? m[1]} (signedData: ${WACZ_WORD[m[2] ?? ''] ?? m[2]})`,
  ],
  [
    /^(.+) \(datapackage-digest\.json has (one|none)\)$/,
    (m) =>
      `${WACZ_WORD[m[1] ?? ''] ?? m[1]} (datapackage-digest.json ${m[2] === 'one' ? 'tem um' : 'não tem nenhum'})`,
  ],
  [/^not a WACZ \(a zip file\): (.+)$/s, (m, tr) => `não é um WACZ (um arquivo zip): ${tr(m[1] ?? '')}`],
  [/^not JSON \((.+)\)$/s, (m, tr) => `não é JSON (${tr(m[1] ?? '')})`],
  // A failed part as the summary names it: `label (source)`.
  [/^(.+) \((file|receipt|certificate)\)$/s, (m, tr) => `${tr(m[1] ?? '')} (${tr(m[2] ?? '')})`],
  // "X (receipt Y)": what was read, then what the receipt says.
  [
    /^(.+) \(receipt( root)? (.+)\)$/s,
    (m, tr) => `${tr(m[1] ?? '')} (${m[2] ? 'raiz do recibo' : 'recibo'} ${tr(m[3] ?? '')})`,
  ],
  [/^(.+) of (\d+) bytes$/, (m, tr) => `${tr(m[1] ?? '')} de ${m[2]} bytes`],
  [/^(\d+) bytes$/, (m) => `${m[1]} bytes`],
  // Check 1.
  [
    /^in \/EmbeddedFiles and \/AF, AFRelationship (\S+)$/,
    (m) => `em /EmbeddedFiles e /AF, AFRelationship ${m[1] === 'absent' ? 'ausente' : m[1]}`,
  ],
  [
    /^stamped: its first (\d+) bytes are exactly the file$/,
    (m) => `carimbado: seus primeiros ${m[1]} bytes são exatamente o arquivo`,
  ],
  [/^the file is the notarized one \(SHA-256 (\S+)\)$/, (m) => `o arquivo é o notarizado (SHA-256 ${m[1]})`],
  // Check 2.
  [
    /^(\S+): leaf SHA-256\(0x00\|\|h\), node SHA-256\(0x01\|\|l\|\|r\); leaf (\d+) of (\d+)$/,
    (m) => `${m[1]}: folha SHA-256(0x00||h), nó SHA-256(0x01||e||d); folha ${m[2]} de ${m[3]}`,
  ],
  [/^(.+) from (\d+) siblings?$/s, (m, tr) => `${tr(m[1] ?? '')} a partir de ${m[2]} irmão(s)`],
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
  [/^no attestation (\S+)$/, (m) => `nenhuma atestação ${m[1]}`],
  [/^revoked at (\S+)$/, (m) => `revogada em ${m[1]}`],
  [/^expires (\S+)$/, (m) => `expira em ${m[1]}`],
  [/^no receipt for (\S+)$/, (m) => `nenhum recibo de transação para ${m[1]}`],
  [/^reverted \((\S+)\)$/, (m) => `revertida (${m[1]})`],
  [/^uid (\S+), schema (\S+), attester (\S+)$/, (m) => `uid ${m[1]}, schema ${m[2]}, attester ${m[3]}`],
  [
    /^(\d+) \(at least (\d+) required; tip (\d+)\)$/,
    (m) => `${m[1]} (exigidas ao menos ${m[2]}; topo da cadeia ${m[3]})`,
  ],
  [/^(\S+) \(block (\S+)\)$/, (m, tr) => `${m[1]} (bloco ${tr(m[2] ?? '')})`],
  [/^(\S+) reads what (\S+) reads$/, (m) => `${m[1]} lê o mesmo que ${m[2]}`],
  [/^(\d+) endpoints agree$/, (m) => `${m[1]} endpoints concordam`],
  [
    /^(\d+) confirmations at (\S+) \((\d+) so far\)$/,
    (m) => `${m[1]} confirmações em ${m[2]} (${m[3]} até agora)`,
  ],
  [
    /^attestation (\S+) holds the root, by (\S+), at (\S+) \((.+)\)$/s,
    (m, tr) => `a atestação ${m[1]} guarda a raiz, por ${m[2]}, em ${m[3]} (${tr(m[4] ?? '')})`,
  ],
  [
    /^serves chain (\d+), not the receipt's chain (\d+) \((.+)\)$/,
    (m) => `serve a chain ${m[1]}, não a do recibo, ${m[2]} (${m[3]})`,
  ],
  // Check 4.
  [
    /^\(get-anchor (\S+)\) on (\S+) \((\S+)\), tx (\S+)$/,
    (m) => `(get-anchor ${m[1]}) em ${m[2]} (${m[3]}), tx ${m[4]}`,
  ],
  [
    /^a Hiro API \((\S+)\)(, tip (\d+))?$/,
    (m) => `uma API Hiro (${m[1]})${m[2] ? `, topo da cadeia ${m[3]}` : ''}`,
  ],
  [/^(.+), tip (\d+)$/s, (m, tr) => `${tr(m[1] ?? '')}, topo da cadeia ${m[2]}`],
  [/^not checked here: (.+)$/s, (m, tr) => `não conferida aqui: ${tr(m[1] ?? '')}`],
  [
    /^the transaction (\S+) itself \(status, block, call\): (.+)$/s,
    (m, tr) => `a própria transação ${m[1]} (situação, bloco, chamada): ${list(m[2], tr)}`,
  ],
  [
    /^unknown to this (endpoint|index): (\S+)$/,
    (m) => `desconhecida por este ${m[1] === 'index' ? 'índice' : 'endpoint'}: ${m[2]}`,
  ],
  [
    /^(u\d+), no later than the (?:receipt's|transaction's) block (\d+)$/,
    (m) => `${m[1]}, não depois do bloco do recibo, ${m[2]}`,
  ],
  [
    /^the root is on record in (\S+) since block (\S+) \((.+)\)$/s,
    (m, tr) => `a raiz está registrada em ${m[1]} desde o bloco ${m[2]} (${tr(m[3] ?? '')})`,
  ],
  [
    /^serves network_id (\S+), not the receipt's (\S+) \((\S+)\)$/,
    (m) => `serve o network_id ${m[1]}, não o do recibo, ${m[2]} (${m[3]})`,
  ],
  [
    /^not synced: its tip is block (\d+), the receipt's transaction is in block (\d+)$/,
    (m) => `não sincronizado: seu topo é o bloco ${m[1]}, a transação do recibo está no bloco ${m[2]}`,
  ],
  [
    /^its index has reached block (\S+), not yet the receipt's block (\d+)$/,
    (m, tr) => `seu índice chegou ao bloco ${tr(m[1] ?? '')}, ainda não ao bloco do recibo, ${m[2]}`,
  ],
  // Check 5.
  [/^does not parse: (.+)$/s, (m) => `não pôde ser lido: ${m[1]}`],
  [/^(SHA-\d+) (\S+) \((.+) (\S+)\)$/, (m, tr) => `${m[1]} ${m[2]} (${tr(m[3] ?? '')} ${m[4]})`],
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
    /^\[0 (\d+) (\d+) (\d+)\]: the whole file but the \/Contents signature string( up to its revision \((\d+) bytes added after\))?$/,
    (m) =>
      `[0 ${m[1]} ${m[2]} ${m[3]}]: o arquivo inteiro menos a string /Contents da assinatura` +
      (m[4] ? ` até a sua revisão (${m[5]} bytes acrescentados depois)` : ''),
  ],
  [/^\[0 (\d+) (\d+) (\d+)\]: (.+)$/s, (m, tr) => `[0 ${m[1]} ${m[2]} ${m[3]}]: ${tr(m[4] ?? '')}`],
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
  [/^(.+) \(not ETSI\.RFC3161\)$/, (m, tr) => `${tr(m[1] ?? '')} (não é ETSI.RFC3161)`],
  [
    /^(.+): good at (\S+) \((\S+), thisUpdate (\S+)\)$/s,
    (m, tr) => `${tr(m[1] ?? '')}: válido em ${m[2]} (${m[3]}, thisUpdate ${m[4]})`,
  ],
  [
    /^(.+): not revoked as of (\S+) \((\S+)\), nothing newer for (\S+)$/s,
    (m, tr) => `${tr(m[1] ?? '')}: não revogado até ${m[2]} (${m[3]}), nada mais recente para ${m[4]}`,
  ],
  [
    /^(.+) revoked at (\S+)( \((.+)\))? \((\S+)\)$/s,
    (m, tr) =>
      `${tr(m[1]?.replace(/:$/, '') ?? '')}: revogado em ${m[2]}${m[3] ? ` (${m[4]})` : ''} (${m[5]})`,
  ],
  [/^(.+): unknown \((.+)\)$/s, (m, tr) => `${tr(m[1] ?? '')}: desconhecido (${list(m[2], tr)})`],
  [
    /^none of the (\d+) OCSP answers and (\d+) CRLs is about this certificate$/,
    (m) => `nenhuma das ${m[1]} respostas OCSP e ${m[2]} LCRs trata deste certificado`,
  ],
  [
    /^no revocation data in the \/DSS for (.+)$/s,
    (m, tr) => `sem dados de revogação no /DSS para ${list(m[1], tr)}`,
  ],
  [
    /^document timestamp (\d+ \d+ R) covers no revocation data for (.+)$/s,
    (m, tr) => `o carimbo do documento ${m[1]} não cobre dados de revogação para ${tr(m[2] ?? '')}`,
  ],
  [/^SubFilter (.+) is not a PAdES baseline one$/, (m) => `SubFilter ${m[1]} não é de um nível básico PAdES`],
  [
    /^signed by (.+?)(?: at (\S+))?, covering (the whole file|its revision) \(SHA-256 (\S+) of the signed ranges\), (B-B|B-T|B-LT|B-LTA|no) level at (\S+)$/s,
    (m, tr) =>
      `assinado por ${tr(m[1] ?? '')}${m[2] ? ` em ${m[2]}` : ''}, cobrindo ` +
      `${m[3] === 'the whole file' ? 'o arquivo inteiro' : 'a sua revisão'} (SHA-256 ${m[4]} dos intervalos ` +
      `assinados), nível ${m[5] === 'no' ? 'nenhum' : m[5]} em ${m[6]}`,
  ],
  [
    /^no signature covers the file up to its end \((\d+) bytes\): bytes were added after signing \((\d+) bytes after the last %%EOF\)$/,
    (m) =>
      `nenhuma assinatura cobre o arquivo até o fim (${m[1]} bytes): bytes foram acrescentados depois da ` +
      `assinatura (${m[2]} bytes depois do último %%EOF)`,
  ],
  [/^(.+) \(no issuer in the file\)$/, (m, tr) => `${tr(m[1] ?? '')} (sem emissor no arquivo)`],
  [/^a trust anchor does not parse: (.+)$/s, (m) => `uma âncora de confiança não pôde ser lida: ${m[1]}`],
  [/^an OCSP answer: (.+)$/s, (m, tr) => `uma resposta OCSP: ${tr(m[1] ?? '')}`],
  [/^a CRL: (.+)$/s, (m, tr) => `uma LCR: ${tr(m[1] ?? '')}`],
  // Endpoint answers (http.ts, evm.ts, stacks-api.ts).
  [/^unreachable: (.+)$/s, (m, tr) => `inalcançável: ${tr(m[1] ?? '')}`],
  [/^(\S+): (.+)$/s, (m, tr) => (isData(m[1] ?? '') ? `${m[1]}: ${tr(m[2] ?? '')}` : NO_MATCH)],
  // Something that only adds a parenthesis to data: the parenthesis translated.
  [/^(.+) \((.+)\)$/s, (m, tr) => (isData(m[1] ?? '') ? `${m[1]} (${tr(m[2] ?? '')})` : NO_MATCH)],
];

/**
 * Phrases of the core's sentences not written as a pattern above (longest first when replaced): the text is
 * translated piece by piece around its data.
 */
const PHRASES: Readonly<Record<string, string>> = {
  'redirects are not followed (ask the final endpoint directly)':
    'redirecionamentos não são seguidos (consulte diretamente o endpoint final)',
  'not a JSON-RPC response': 'não é uma resposta JSON-RPC',
  'no result': 'sem result',
  'is not a quantity': 'não é uma quantidade',
  'is not call data': 'não são dados de chamada',
  'not a transaction receipt': 'não é um recibo de transação',
  'not JSON': 'não é JSON',
  'larger than': 'maior que',
  listed: 'listado',
  'rate-limited': 'limite de pedidos atingido',
  'retry after': 'tente de novo após',
  'the request budget': 'o orçamento de pedidos',
  'the endpoint': 'o endpoint',
  'this endpoint has been disabled': 'este endpoint foi desativado',
  gone: 'desativado',
  'a Hiro API': 'uma API Hiro',
  'a stacks-node has no transaction index': 'um stacks-node não tem índice de transações',
  'without transaction routes': 'sem rotas de transações',
  'and it has no': 'e não tem',
  routes: 'rotas',
  'its routes answer': 'suas rotas respondem',
  answer: 'resposta',
  'does not decode': 'não decodifica',
  'undecodable Clarity value': 'valor Clarity indecifrável',
  unexpected: 'inesperado',
  'the answer is larger than': 'a resposta passa de',
  bytes: 'bytes',
  'timed out': 'tempo esgotado',
  'the operation was aborted due to timeout': 'a operação foi abortada por tempo esgotado',
  'fetch failed': 'falha no pedido',
  'connection refused': 'conexão recusada',
  'is not in the answer': 'não está na resposta',
  'no response for this certificate': 'nenhuma resposta para este certificado',
  'the responder certificate is not in the answer': 'o certificado do respondedor não está na resposta',
  'the responder does not know the certificate': 'o respondedor não conhece o certificado',
  'revoked status without a revocation time': 'situação revogada sem data de revogação',
  'not issued by the certificate issuer': 'não emitida pelo emissor do certificado',
  'the issuer may not sign CRLs (no cRLSign key usage)':
    'o emissor não pode assinar LCRs (sem o uso cRLSign)',
  'its signature does not verify with the issuer key': 'sua assinatura não confere com a chave do emissor',
  'a delta CRL (not complete)': 'uma LCR delta (incompleta)',
  'a partial CRL (issuing distribution point scope)': 'uma LCR parcial (escopo de ponto de distribuição)',
  'the CRL does not cover this kind of certificate': 'a LCR não cobre este tipo de certificado',
  'request budget of this look-up spent': 'orçamento de pedidos desta consulta esgotado',
  'it does not parse': 'não pôde ser lido',
  'a certificate of the chain': 'um certificado da cadeia',
  'a certificate': 'um certificado',
  'not DER': 'não é DER',
  'not a SignedData': 'não é um SignedData',
  'not exactly one SignerInfo': 'não exatamente um SignerInfo',
  'unsupported digest algorithm': 'algoritmo de resumo não suportado',
  'is not an ICP-Brasil PAdES policy of DOC-ICP-15.03 v9.1':
    'não é uma política PAdES ICP-Brasil do DOC-ICP-15.03 v9.1',
  'must be present': 'deve estar presente',
  'must not be present': 'não deve estar presente',
  'must not both be present': 'não devem estar ambos presentes',
  'must be': 'deve ser',
  'and be': 'e ser',
  found: 'encontrado',
  'its note': 'sua nota',
  note: 'nota',
  or: 'ou',
  and: 'e',
  'the signature': 'a assinatura',
  'signature dictionary': 'dicionário de assinatura',
  'not after': 'não depois de',
  'not before': 'não antes de',
  'the signing period of the policy': 'o período de assinatura da política',
  'signing time': 'hora da assinatura',
  within: 'dentro de',
  outside: 'fora de',
  'is the declared policy': 'é a política declarada',
  'the declared policy': 'a política declarada',
  'policy artifact': 'artefato da política',
  of: 'de',
  in: 'em',
  at: 'em',
  to: 'para',
  by: 'por',
  no: 'nenhum',
  not: 'não',
  is: 'é',
  the: 'o',
  a: 'um',
  with: 'com',
  without: 'sem',
  expired: 'expirado',
  revoked: 'revogado',
  issuer: 'emissor',
  certificate: 'certificado',
  certificates: 'certificados',
  chain: 'cadeia',
  block: 'bloco',
  tip: 'topo da cadeia',
  receipt: 'recibo',
  none: 'nenhum',
  unknown: 'desconhecido',
  missing: 'ausente',
  present: 'presente',
  absent: 'ausente',
  valid: 'válido',
  invalid: 'inválido',
  unavailable: 'indisponível',
  unreachable: 'inalcançável',
  'not found': 'não encontrado',
  'too many': 'demais',
  timestamp: 'carimbo do tempo',
  'document timestamp': 'carimbo do documento',
  'signature timestamp': 'carimbo da assinatura',
  signer: 'assinante',
  responder: 'respondedor',
  endpoint: 'endpoint',
  endpoints: 'endpoints',
};

/** Phrases by length, longest first, each as a whole-word pattern. */
const PHRASE_PATTERNS: readonly [RegExp, string][] = Object.entries(PHRASES)
  .sort(([a], [b]) => b.length - a.length)
  .map(([en, pt]) => [new RegExp(`(?<![\\w-])${escapeRegExp(en)}(?![\\w-])`, 'g'), pt]);

/** Data in a text: kept as it is in any language (see `protect`). */
const DATA: readonly RegExp[] = [
  /\bhttps?:\/\/[^\s),;]+/g,
  // A digest as WARC and WACZ write it, and a path inside an archive (`archive/data.warc.gz`).
  /\bsha(?:256|384|512):[0-9a-fA-F]+/g,
  /\b[\w.-]+(?:\/[\w.-]+)+/g,
  /\bWARC-[\w-]+/g,
  /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z\b/g,
  /"[^"]*"/g,
  // X.500 names as the core prints them: `O=Notary Test, CN=Notary Test Signer`.
  /\b(?:CN|O|OU|C|L|ST|E|SN|GN|SERIALNUMBER|DC|emailAddress|UID|\d+(?:\.\d+)+)=[^,;()]*(?:, (?:CN|O|OU|C|L|ST|E|SN|GN|SERIALNUMBER|DC|emailAddress|UID|\d+(?:\.\d+)+)=[^,;()]*)*/g,
  /\b0x[0-9a-fA-F]+…?/g,
  /\b[0-9a-f]{16,}…?/g,
  /\bS[PTMN][0-9A-Z]{20,}(?:\.[A-Za-z][\w-]*)?(?:::[\w-]+)?/g,
  /\(some \{[^}]*\}\)/g,
  /\b\d+ \d+ R\b/g,
  /\b(?:SHA-\d+|RFC \d+|id-[\w-]+|signing-certificate-v2|B-B|B-T|B-LT|B-LTA|hiro-v\d|get-anchor|call-read|keccak256|bytes32|JSON-RPC|DOC-ICP-[\d.]+|ICP-Brasil|Tabela [A-Z]\.\d+|AD-R[BTCA])\b/g,
  /--[a-z][\w-]*/g,
  /(?:\/[A-Za-z0-9][\w.-]*)+/g,
  /\b[A-Za-z_][\w-]*(?:\.[A-Za-z0-9_][\w-]*)+(?:\(\))?/g,
  /\b[a-z]+(?:_[A-Za-z0-9]+)+\b/g,
  /\b[a-z]+[A-Z][A-Za-z0-9]*\b/g,
  /\b[A-Z][a-z]+[A-Z][A-Za-z0-9]*\b/g,
  /\b[A-Z]{2,}[a-z][A-Za-z0-9]*\b/g,
  /\b[A-Z]{2,}\d*s?\b/g,
  /\bu\d+\b/g,
  /\b\d+(?:[.,]\d+)*\b/g,
];

/** The text of a rule that did not apply after all (its pattern matched too widely). */
const NO_MATCH = '\u0000no-match';

function role(word: string | undefined): string {
  return ROLE[word ?? ''] ?? word ?? '';
}

function list(text: string | undefined, tr: Tr): string {
  return (text ?? '')
    .split('; ')
    .map((part) => tr(part))
    .join('; ');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `text` is only data (no word of prose once its data is set aside). */
function isData(text: string): boolean {
  return !/[A-Za-z]{2,}/.test(protect(text).masked);
}

/** `text` with each piece of data replaced by a marker, and the pieces to put back. */
function protect(text: string): { masked: string; kept: string[] } {
  const kept: string[] = [];
  let masked = text;
  for (const pattern of DATA) {
    masked = masked.replace(pattern, (piece) => {
      kept.push(piece);
      return marker(kept.length - 1);
    });
  }
  return { masked, kept };
}

/**
 * A placeholder for the `i`th piece: a private-use character between two control characters, so that no later
 * pattern (a number, a word) matches inside it.
 */
function marker(i: number, open = '\u0001', close = '\u0002'): string {
  return `${open}${String.fromCharCode(0xe000 + i)}${close}`;
}

function unmark(text: string, pieces: readonly string[], open = '\u0001', close = '\u0002'): string {
  return text.replace(
    new RegExp(`${open}([\\ue000-\\uf8ff])${close}`, 'g'),
    (_, c: string) => pieces[c.charCodeAt(0) - 0xe000] ?? '',
  );
}

/**
 * `text`, a summary, label, value or source of a report, in Portuguese (see the module comment), and
 * whether all of it was translated.
 */
export function toPortuguese(text: string): Translated {
  let complete = true;
  const tr: Tr = (s) => {
    const exact = EXACT[s];
    if (exact !== undefined) return exact;
    if (isData(s)) return s;
    for (const [pattern, render] of RULES) {
      const m = pattern.exec(s);
      if (!m) continue;
      const out = render(m, tr);
      if (out !== NO_MATCH) return out;
    }
    // Phrase by phrase around the data; what is left in English makes the text untranslated.
    const { masked, kept } = protect(s);
    const phrases: string[] = [];
    let replaced = masked;
    for (const [pattern, pt] of PHRASE_PATTERNS) {
      replaced = replaced.replace(pattern, () => {
        phrases.push(pt);
        return marker(phrases.length - 1, '\u0003', '\u0004');
      });
    }
    if (/[A-Za-z]{2,}/.test(replaced)) {
      complete = false;
      return s;
    }
    return unmark(unmark(replaced, phrases, '\u0003', '\u0004'), kept);
  };
  const out = tr(text);
  return { text: out, translated: complete };
}
