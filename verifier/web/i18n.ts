/**
 * The verify page's own texts, in Portuguese (the default for a browser set to Portuguese) and English.
 * `{name}` marks a parameter. The report's texts (summaries, evidence) are messages rendered from the tables of
 * `../src/messages/`.
 */

export type Language = 'pt' | 'en';

const pt = {
  'page.title': 'Verificar sem nós',
  'page.intro':
    'Esta página confere arquivos notarizados contra seus certificados ou recibos, inteiramente neste navegador: os arquivos não são enviados a lugar nenhum, e os únicos pedidos feitos vão aos endpoints de blockchain que você digitar.',
  'page.keep':
    'Para guardá-la, salve esta página (Ctrl+S): ela é um único arquivo e funciona aberta do disco. No terminal, o mesmo programa: node notary-verify.mjs.',
  'page.version': 'notary-verify {version}',
  'lang.label': 'Idioma',
  'lang.pt': 'Português',
  'lang.en': 'English',

  'files.title': '1. Arquivos e suas provas',
  'files.help':
    'Escolha cada arquivo com o seu certificado (arquivo.certificate.pdf) ou recibo (arquivo.receipt.json), vários de uma vez. Um PDF carimbado basta sozinho: ele contém o original. Um certificado com outro nome também serve: o recibo anexado diz o nome do arquivo. Uma captura web assinada (arquivo.wacz) também basta sozinha.',
  'files.drop': 'Arraste os arquivos para cá',
  'files.pick': 'Escolher arquivos',
  'files.clear': 'Limpar',
  'files.none': 'Nenhum arquivo escolhido.',
  'files.count.one': '1 arquivo escolhido',
  'files.count.other': '{n} arquivos escolhidos',

  'endpoints.title': '2. Endpoints das blockchains (verificações 3 e 4)',
  'endpoints.help':
    'Os endpoints em que você confia; com vários para uma blockchain, cada um é consultado e todos devem concordar. Use https (http só em 127.0.0.1 ou localhost), sem usuário, senha ou parâmetros.',
  'endpoints.evm': 'EVM (JSON-RPC), um por linha',
  'endpoints.stacks': 'Stacks (API), um por linha',
  'endpoints.confirmations': 'Confirmações exigidas em cada blockchain (o bloco de inclusão conta como 1)',

  'trust.title': '3. Âncoras de confiança (verificações 5 e 6; de uma captura web, 4 e 5)',
  'trust.help':
    'Os certificados a que o carimbo do tempo e o assinante do certificado devem se encadear. Sem âncora, a integridade e os carimbos são conferidos, mas não a cadeia.',
  'trust.none': 'Nenhuma: a cadeia de certificados não é conferida',
  'trust.icpBrasil': 'Raízes da ICP-Brasil (incluídas nesta página)',
  'trust.files': 'Certificados em arquivos PEM',
  'trust.pick': 'Escolher arquivos PEM',
  'trust.filesHint': 'Até {max} arquivos de 1 MB, com blocos -----BEGIN CERTIFICATE-----.',
  'trust.chosen': 'Âncoras: {names}',
  'trust.at': 'Julgar os certificados na data (verificação 6)',
  'trust.atHelp': 'Vazio: agora. Hora deste computador.',
  'trust.atUtc': 'Ou seja: {at}',

  'run.button': 'Verificar',
  'run.progress': 'Verificando… {done} de {total}',
  'run.noFiles': 'Escolha ao menos um arquivo e sua prova.',
  'run.badEndpoint.not-url': 'Endpoint recusado: {value} não é um endereço.',
  'run.badEndpoint.scheme': 'Endpoint recusado: {value}. Use https (ou http em 127.0.0.1 ou localhost).',
  'run.badEndpoint.credentials': 'Endpoint recusado: {value}. Tire o usuário, a senha ou os parâmetros.',
  'run.badEndpoint.insecure': 'Endpoint recusado: {value}. http só em 127.0.0.1 ou localhost; use https.',
  'run.badConfirmations': 'Confirmações: um número inteiro, 1 ou mais.',
  'run.badAnchor.no-certificate':
    '{name} não traz nenhum certificado em PEM (-----BEGIN CERTIFICATE-----): escolha outro arquivo.',
  'run.badAnchor.too-large': '{name} passa de 1 MB: não é um arquivo de certificados.',
  'run.badAnchor.too-many': 'Os arquivos escolhidos trazem certificados demais (mais de {max}).',
  'run.noAnchorFiles': 'Escolha os arquivos PEM das âncoras, ou outra opção.',
  'run.error': 'A verificação parou: {message}',

  'result.title': 'Resultado',
  'result.tally':
    '{checked} conferidos: {passed} verificados, {failed} não conferem, {incomplete} incompletos, {unusable} sem condição de conferir; {skipped} ignorados.',
  'result.exit': 'Como o notary-verify no terminal: código de saída {code}.',
  'result.csv': 'Baixar CSV',
  'result.json': 'Baixar JSON',
  'result.skipped': 'Ignorados',
  'result.skipped.no-proof': '{name}: sem certificado nem recibo',
  'result.skipped.proof-unused': '{name}: o certificado do mesmo arquivo foi usado',

  'outcome.passed': 'Verificado',
  'outcome.failed': 'Não confere',
  'outcome.incomplete': 'Incompleto',
  'outcome.unusable': 'Sem condição de conferir',
  'outcome.help.passed': 'Todas as verificações aplicáveis passaram.',
  'outcome.help.failed': 'A prova não confere: a verificação {id} falhou.',
  'outcome.help.incomplete':
    'Nenhuma verificação falhou, mas alguma não pôde ser feita ou foi feita só em parte.',

  'item.proof.certificate': 'certificado {name}',
  'item.proof.receipt': 'recibo {name}',
  'item.proof.stamped-certificate': 'PDF carimbado (contém o original)',
  'item.serial': 'Número de série',
  'item.sha256': 'SHA-256',
  'item.service': 'Emitido por',
  'item.act': 'Ato notarial',
  'item.act.value': '{type}, selo {selo}, livro e folha {bookPage}',
  'item.mne': 'MNE',
  'item.mne.valid': 'dígitos verificadores e data ({date}) válidos; confirme o ato no e-Notariado',
  'item.mne.invalid': 'INVÁLIDA: {problem}',
  'item.problem.file-missing':
    'O arquivo que esta prova nomeia não foi escolhido (e o certificado não é um PDF carimbado que o contenha).',
  'item.problem.too-large': 'Arquivo grande demais para conferir.',
  'item.problem.unreadable': 'O arquivo não pôde ser lido.',
  'item.problem.no-receipt':
    'Não é um certificado legível com o recibo anexado (receipt.json): certificados emitidos antes dos recibos não podem ser conferidos; baixe-o de novo no serviço.',
  'item.problem.bad-receipt': 'O recibo não é um recibo que esta versão sabe ler.',
  'item.problem.detail': 'Detalhe: {message}',

  'check.1': 'SHA-256 do arquivo',
  'check.2': 'Prova de Merkle',
  'check.3': 'Atestação EVM (EAS)',
  'check.4': 'Registro na Stacks',
  'check.5': 'Carimbo do tempo (RFC 3161)',
  'check.6': 'Assinatura do certificado (PAdES)',
  'status.passed': 'confere',
  'status.failed': 'não confere',
  'status.partial': 'em parte',
  'status.not-run': 'não feita',
  'reason.not-applicable': 'não se aplica',
  'reason.not-requested': 'não pedida',
  'reason.pending': 'registro pendente',
  'reason.no-endpoint': 'nenhum endpoint',
  'reason.unavailable': 'endpoint indisponível',
  'reason.not-checked': 'parte não conferida',
  'check.level': 'Nível PAdES alcançado: {level} (julgado em {at})',
  'check.notHigher': 'não mais alto porque: {why}',
  'check.evidence': 'Evidências',

  'capture.proof': 'captura web (WACZ)',
  'capture.help.failed': 'A captura não confere: a verificação {id} falhou.',
  'capture.exit': 'Como notary-verify {name} no terminal: código de saída {code}.',
  'chain.exit': 'Como notary-verify chain {name} no terminal: código de saída {code}.',
  'capture.sha256': 'SHA-256 do WACZ',
  'capture.bytes': '{bytes} bytes',
  'capture.signature': 'Assinatura',
  'capture.signed.domain': '{signer} (forma de domínio), criada em {created}',
  'capture.signed.anonymous': 'chave de SHA-256 {signer} (forma anônima), criada em {created}',
  'capture.unsigned': 'nenhuma',
  'capture.timeSignature': 'Carimbo do tempo da assinatura',
  'capture.noTimeSignature': 'nenhum verificado',
  'capture.url': 'Endereço pedido',
  'capture.finalUrl': 'Endereço final',
  'capture.status': '{url} (HTTP {status})',
  'capture.time': 'Capturado',
  'capture.span': 'de {from} a {to}',
  'capture.title': 'Título',
  'capture.server': 'Endereço do servidor',
  'capture.tls': 'Certificado TLS do documento principal',
  'capture.tlsValue': '{subject}; emissor {issuer}; válido de {from} a {to}; SHA-256 {sha256}',
  'capture.noTls': 'nenhum (http, ou não registrado)',
  'capture.problem.too-large': 'Captura grande demais para conferir.',
  'capture.problem.not-wacz': 'Não é um WACZ que possa ser conferido (um zip com datapackage.json).',
  'capture.problem.unreadable': 'O arquivo não pôde ser lido.',
  'wacz.check.1': 'Hashes do pacote (datapackage.json)',
  'wacz.check.2': 'Resumo do datapackage',
  'wacz.check.3': 'Assinatura (signedData)',
  'wacz.check.4': 'Identidade do assinante (domainCert)',
  'wacz.check.5': 'Carimbo do tempo (RFC 3161)',
  'wacz.check.6': 'Registros WARC conforme o índice',
  'wacz.check.7': 'Registro da captura (capture.json)',
} as const;

export type MessageKey = keyof typeof pt;

const en: Record<MessageKey, string> = {
  'page.title': 'Verify without us',
  'page.intro':
    'This page checks notarized files against their certificates or receipts, entirely in this browser: the files are sent nowhere, and the only requests made go to the blockchain endpoints you type.',
  'page.keep':
    'To keep it, save this page (Ctrl+S): it is a single file and works opened from disk. In a terminal, the same program: node notary-verify.mjs.',
  'page.version': 'notary-verify {version}',
  'lang.label': 'Language',
  'lang.pt': 'Português',
  'lang.en': 'English',

  'files.title': '1. Files and their proofs',
  'files.help':
    'Choose each file with its certificate (file.certificate.pdf) or receipt (file.receipt.json), several at once. A stamped PDF is enough alone: it holds the original. A certificate named otherwise works too: its attached receipt names the file. A signed web capture (file.wacz) is enough alone too.',
  'files.drop': 'Drop the files here',
  'files.pick': 'Choose files',
  'files.clear': 'Clear',
  'files.none': 'No file chosen.',
  'files.count.one': '1 file chosen',
  'files.count.other': '{n} files chosen',

  'endpoints.title': '2. Blockchain endpoints (checks 3 and 4)',
  'endpoints.help':
    'Endpoints you trust; with several for a chain, each one is asked and all must agree. Use https (http only on 127.0.0.1 or localhost), without user, password or parameters.',
  'endpoints.evm': 'EVM (JSON-RPC), one per line',
  'endpoints.stacks': 'Stacks (API), one per line',
  'endpoints.confirmations': 'Confirmations required on each chain (the inclusion block counts as 1)',

  'trust.title': '3. Trust anchors (checks 5 and 6; of a web capture, 4 and 5)',
  'trust.help':
    'The certificates the timestamp and the certificate’s signer must chain to. Without an anchor, integrity and timestamps are checked, but not the chain.',
  'trust.none': 'None: the certificate chain is not checked',
  'trust.icpBrasil': 'ICP-Brasil roots (included in this page)',
  'trust.files': 'Certificates in PEM files',
  'trust.pick': 'Choose PEM files',
  'trust.filesHint': 'Up to {max} files of 1 MB, with -----BEGIN CERTIFICATE----- blocks.',
  'trust.chosen': 'Anchors: {names}',
  'trust.at': 'Judge the certificates at (check 6)',
  'trust.atHelp': 'Empty: now. This computer’s time.',
  'trust.atUtc': 'That is: {at}',

  'run.button': 'Verify',
  'run.progress': 'Verifying… {done} of {total}',
  'run.noFiles': 'Choose at least one file and its proof.',
  'run.badEndpoint.not-url': 'Endpoint refused: {value} is not an address.',
  'run.badEndpoint.scheme': 'Endpoint refused: {value}. Use https (or http on 127.0.0.1 or localhost).',
  'run.badEndpoint.credentials': 'Endpoint refused: {value}. Remove the user, password or parameters.',
  'run.badEndpoint.insecure': 'Endpoint refused: {value}. http only on 127.0.0.1 or localhost; use https.',
  'run.badConfirmations': 'Confirmations: a whole number, 1 or more.',
  'run.badAnchor.no-certificate':
    '{name} holds no PEM certificate (-----BEGIN CERTIFICATE-----): choose another file.',
  'run.badAnchor.too-large': '{name} is larger than 1 MB: not a certificate file.',
  'run.badAnchor.too-many': 'The chosen files hold too many certificates (more than {max}).',
  'run.noAnchorFiles': 'Choose the anchors’ PEM files, or another option.',
  'run.error': 'The verification stopped: {message}',

  'result.title': 'Result',
  'result.tally':
    '{checked} checked: {passed} verified, {failed} failed, {incomplete} incomplete, {unusable} unusable; {skipped} skipped.',
  'result.exit': 'As notary-verify in a terminal: exit status {code}.',
  'result.csv': 'Download CSV',
  'result.json': 'Download JSON',
  'result.skipped': 'Skipped',
  'result.skipped.no-proof': '{name}: no certificate or receipt',
  'result.skipped.proof-unused': '{name}: the certificate of the same file was used',

  'outcome.passed': 'Verified',
  'outcome.failed': 'Failed',
  'outcome.incomplete': 'Incomplete',
  'outcome.unusable': 'Unusable',
  'outcome.help.passed': 'Every applicable check passed.',
  'outcome.help.failed': 'The proof does not hold: check {id} failed.',
  'outcome.help.incomplete': 'No check failed, but some could not run or ran only in part.',

  'item.proof.certificate': 'certificate {name}',
  'item.proof.receipt': 'receipt {name}',
  'item.proof.stamped-certificate': 'stamped PDF (holds the original)',
  'item.serial': 'Serial number',
  'item.sha256': 'SHA-256',
  'item.service': 'Issued by',
  'item.act': 'Notarial act',
  'item.act.value': '{type}, selo {selo}, book and page {bookPage}',
  'item.mne': 'MNE',
  'item.mne.valid': 'check digits and date ({date}) valid; confirm the act at e-Notariado',
  'item.mne.invalid': 'INVALID: {problem}',
  'item.problem.file-missing':
    'The file this proof names was not chosen (and the certificate is not a stamped PDF that holds it).',
  'item.problem.too-large': 'File too large to check.',
  'item.problem.unreadable': 'The file could not be read.',
  'item.problem.no-receipt':
    'Not a readable certificate with its receipt attached (receipt.json): certificates issued before receipts cannot be checked; download it again from the service.',
  'item.problem.bad-receipt': 'The receipt is not one this version reads.',
  'item.problem.detail': 'Detail: {message}',

  'check.1': 'File SHA-256',
  'check.2': 'Merkle proof',
  'check.3': 'EVM attestation (EAS)',
  'check.4': 'Stacks anchor',
  'check.5': 'Timestamp (RFC 3161)',
  'check.6': 'Certificate signature (PAdES)',
  'status.passed': 'passed',
  'status.failed': 'failed',
  'status.partial': 'partial',
  'status.not-run': 'not run',
  'reason.not-applicable': 'not applicable',
  'reason.not-requested': 'not requested',
  'reason.pending': 'pending anchor',
  'reason.no-endpoint': 'no endpoint',
  'reason.unavailable': 'endpoint unavailable',
  'reason.not-checked': 'part not checked',
  'check.level': 'PAdES level reached: {level} (judged at {at})',
  'check.notHigher': 'not higher because: {why}',
  'check.evidence': 'Evidence',

  'capture.proof': 'web capture (WACZ)',
  'capture.help.failed': 'The capture does not hold: check {id} failed.',
  'capture.exit': 'As notary-verify {name} in a terminal: exit status {code}.',
  'chain.exit': 'As notary-verify chain {name} in a terminal: exit status {code}.',
  'capture.sha256': 'WACZ SHA-256',
  'capture.bytes': '{bytes} bytes',
  'capture.signature': 'Signature',
  'capture.signed.domain': '{signer} (domain form), created {created}',
  'capture.signed.anonymous': 'the key with SHA-256 {signer} (anonymous form), created {created}',
  'capture.unsigned': 'none',
  'capture.timeSignature': 'Time signature',
  'capture.noTimeSignature': 'none verified',
  'capture.url': 'Requested URL',
  'capture.finalUrl': 'Final URL',
  'capture.status': '{url} (HTTP {status})',
  'capture.time': 'Captured',
  'capture.span': '{from} to {to}',
  'capture.title': 'Title',
  'capture.server': 'Server address',
  'capture.tls': 'Main document TLS certificate',
  'capture.tlsValue': '{subject}; issuer {issuer}; valid {from} to {to}; SHA-256 {sha256}',
  'capture.noTls': 'none (http, or not recorded)',
  'capture.problem.too-large': 'Capture too large to check.',
  'capture.problem.not-wacz': 'Not a WACZ that can be checked (a zip with datapackage.json).',
  'capture.problem.unreadable': 'The file could not be read.',
  'wacz.check.1': 'Package hashes (datapackage.json)',
  'wacz.check.2': 'Datapackage digest',
  'wacz.check.3': 'Signature (signedData)',
  'wacz.check.4': 'Signer identity (domainCert)',
  'wacz.check.5': 'Time signature (RFC 3161)',
  'wacz.check.6': 'WARC records against the index',
  'wacz.check.7': 'Capture record (capture.json)',
};

const TABLES: Readonly<Record<Language, Readonly<Record<MessageKey, string>>>> = { pt, en };

/** The text of `key` in `lang`, each `{name}` replaced by `params.name`. */
export function message(
  lang: Language,
  key: MessageKey,
  params: Record<string, string | number> = {},
): string {
  return TABLES[lang][key].replace(/\{(\w+)\}/g, (marker, name: string) =>
    name in params ? String(params[name]) : marker,
  );
}

/** The browser's language when it is one of the page's (`pt`, `pt-BR`...), else English. */
export function preferredLanguage(languages: readonly string[]): Language {
  for (const tag of languages) {
    const primary = tag.toLowerCase().split('-')[0];
    if (primary === 'pt') return 'pt';
    if (primary === 'en') return 'en';
  }
  return 'en';
}
