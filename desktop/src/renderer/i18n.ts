import { createContext, useContext } from 'react';
import type { Language } from '../common/bridge';
import type { ClientError } from '../common/errors';

/** Portuguese (the default) and English texts of the UI. `{name}` marks a parameter. */
const pt = {
  'app.name': 'Notary',
  'app.tagline': 'Registro e prova de existência de documentos',
  'nav.documents': 'Documentos',
  'nav.notarize': 'Notarizar',
  'nav.verify': 'Verificar',
  'nav.settings': 'Configurações',
  'nav.signOut': 'Sair',
  'tenant.label': 'Espaço de trabalho',
  'tenant.personal': 'Pessoal',
  'tenant.role.owner': 'proprietário',
  'tenant.role.admin': 'administrador',
  'tenant.role.editor': 'editor',
  'tenant.role.reader': 'leitor',
  'lang.pt': 'Português',
  'lang.en': 'English',

  'signin.title': 'Entrar',
  'signin.subtitle': 'Use seu e-mail: enviaremos um código de acesso de 6 dígitos.',
  'signin.email': 'E-mail',
  'signin.sendCode': 'Enviar código',
  'signin.sending': 'Enviando…',
  'signin.code': 'Código recebido por e-mail',
  'signin.codeSent': 'Enviamos um código para {email}. Ele vale por 5 minutos.',
  'signin.submit': 'Entrar',
  'signin.signingIn': 'Entrando…',
  'signin.otherEmail': 'Usar outro e-mail',
  'signin.resend': 'Reenviar código',
  'signin.expired': 'Sua sessão expirou. Entre novamente para continuar.',
  'signin.server': 'Servidor',
  'signin.changeServer': 'Alterar',
  'signin.verifyWithout': 'Verificar um arquivo sem entrar',

  'server.downTitle': 'Servidor indisponível',
  'server.retry': 'Tentar novamente',

  'docs.title': 'Documentos',
  'docs.subtitle': 'Registros do espaço {tenant}',
  'docs.search': 'Buscar por nome, número de série, hash ou CID',
  'docs.filter.all': 'Todos',
  'docs.filter.pending': 'Em registro',
  'docs.filter.registered': 'Registrados',
  'docs.col.name': 'Arquivo',
  'docs.col.serial': 'Número de série',
  'docs.col.hash': 'SHA-256',
  'docs.col.date': 'Data',
  'docs.col.status': 'Situação',
  'docs.empty': 'Nenhum documento neste espaço ainda.',
  'docs.emptyAction': 'Notarizar arquivos',
  'docs.noMatch': 'Nenhum documento corresponde à busca.',
  'docs.count.one': '1 documento',
  'docs.count.other': '{n} documentos',
  'docs.refresh': 'Atualizar',
  'docs.loadMore': 'Carregar mais',
  'docs.count.more': '{n} documentos carregados; há mais',
  'docs.ipfs': 'IPFS',
  'docs.web': 'Web',

  'status.registered': 'Registrado',
  'status.pending': 'Em registro',
  'status.partial': 'Registro parcial',
  'status.evm': 'EVM',
  'status.stacks': 'Stacks',

  'notarize.title': 'Notarizar arquivos',
  'notarize.subtitle':
    'O hash SHA-256 de cada arquivo é calculado neste computador antes de qualquer envio. Arquivos já registrados não são enviados de novo.',
  'notarize.drop': 'Arraste arquivos para cá',
  'notarize.pick': 'Escolher arquivos',
  'notarize.limit': 'Até 250 MB por arquivo. O hash é calculado neste computador antes do envio.',
  'notarize.stage.hashing': 'Calculando hash… {pct}%',
  'notarize.stage.checking': 'Verificando registros existentes…',
  'notarize.stage.existing': 'Já registrado: {serial}',
  'notarize.stage.ready': 'Pronto para envio',
  'notarize.stage.queued': 'Na fila',
  'notarize.stage.uploading': 'Enviando… {pct}%',
  'notarize.stage.done': 'Notarizado: {serial}',
  'notarize.stage.cancelled': 'Cancelado',
  'notarize.stage.error': 'Falhou',
  'notarize.consentItem': 'Consentimento para este arquivo',
  'notarize.consentAll': 'Consentimento (LGPD) para todos os arquivos listados',
  'notarize.consentText':
    'Declaro que tenho autorização para enviar estes arquivos e consinto com o tratamento dos dados pessoais neles contidos para registro e prova de existência (LGPD, Lei 13.709/2018, art. 7º, I). O arquivo fica armazenado no serviço; apenas o seu hash SHA-256 é registrado publicamente em blockchain.',
  'notarize.submit.one': 'Notarizar 1 arquivo',
  'notarize.submit.other': 'Notarizar {n} arquivos',
  'notarize.needConsent': 'Marque o consentimento para enviar.',
  'notarize.cancel': 'Cancelar',
  'notarize.remove': 'Remover',
  'notarize.retry': 'Tentar novamente',
  'notarize.open': 'Ver registro',
  'notarize.clearDone': 'Limpar concluídos',
  'notarize.tooLarge': 'Maior que 250 MB: não pode ser enviado.',
  'notarize.readerRole': 'Seu papel neste espaço ({role}) não permite enviar documentos.',

  'ipfs.open': 'Importar do IPFS',
  'ipfs.title': 'Importar do IPFS',
  'ipfs.help':
    'O serviço busca o arquivo nos gateways IPFS configurados e confere cada bloco com o CID antes de registrá-lo. Nada é enviado deste computador e o arquivo não é copiado para o serviço.',
  'ipfs.cid': 'CID do arquivo',
  'ipfs.cidPlaceholder': 'bafy… ou Qm…',
  'ipfs.cidHint': 'CIDv0 (Qm…) ou CIDv1 em base32 (b…), de um arquivo (não de uma pasta).',
  'ipfs.name': 'Nome do documento (opcional)',
  'ipfs.namePlaceholder': 'Se vazio, o próprio CID',
  'ipfs.consent': 'Consentimento (LGPD) para este arquivo',
  'ipfs.consentText':
    'Declaro que tenho autorização para notarizar este arquivo e consinto com o tratamento dos dados pessoais nele contidos para registro e prova de existência (LGPD, Lei 13.709/2018, art. 7º, I). O conteúdo permanece no IPFS, fora do controle do serviço, que guarda apenas o registro; o hash SHA-256 é registrado publicamente em blockchain.',
  'ipfs.submit': 'Importar e notarizar',
  'ipfs.importing': 'Buscando no IPFS e conferindo com o CID…',
  'ipfs.done': 'Notarizado: {serial}',
  'ipfs.cid.empty': 'Informe o CID do arquivo.',
  'ipfs.cid.path': 'Informe só o CID, sem ipfs:// nem endereço de gateway.',
  'ipfs.cid.pathSuggest': 'Informe só o CID, sem ipfs:// nem endereço de gateway: {cid}',
  'ipfs.cid.uppercase': 'Escreva o CIDv1 em base32 com letras minúsculas (b…).',
  'ipfs.cid.otherBase':
    'Este CIDv1 está em outra base (k… base36, z… base58…): converta-o para base32 (b…), por exemplo com "ipfs cid base32 <CID>".',
  'ipfs.cid.v0': 'Um CIDv0 é "Qm" seguido de 44 caracteres base58; este está incompleto ou alterado.',
  'ipfs.cid.v1': 'Este CIDv1 não é válido: está incompleto ou alterado.',
  'ipfs.cid.codec': 'Este CID aponta para dados IPLD, não para um arquivo: use o CID de um arquivo.',
  'ipfs.cid.hash': 'Este CID usa uma função de hash que o serviço não confere (só sha2-256).',
  'ipfs.cid.unknown': 'Não é um CID: use um CIDv0 (Qm…) ou um CIDv1 em base32 (b…).',
  'ipfs.err.invalidCid':
    'O servidor recusou o CID: só o CID de um arquivo (não de uma pasta), CIDv0 (Qm…) ou CIDv1 em base32 (b…).',
  'ipfs.err.consent': 'O servidor exige o consentimento (LGPD) para importar.',
  'ipfs.err.forbidden':
    'Seu papel neste espaço não permite importar documentos (é preciso ser editor ou superior).',
  'ipfs.err.tooLarge': 'O arquivo no IPFS excede o limite de 250 MB; nada foi registrado.',
  'ipfs.err.rateLimited': 'Muitas importações; tente novamente em {seconds} s.',
  'ipfs.err.rateLimitedShort': 'Muitas importações; aguarde um pouco e tente novamente.',
  'ipfs.err.badGateway':
    'O gateway IPFS falhou ou devolveu um conteúdo que não corresponde ao CID; nada foi registrado.',
  'ipfs.err.notOffered': 'Este servidor não oferece importação do IPFS.',

  'capture.open': 'Capturar uma página web',
  'capture.title': 'Capturar uma página web',
  'capture.help':
    'O serviço abre a página num navegador isolado, arquiva tudo o que ela carrega (WACZ, com captura de tela e PDF) e registra o arquivo. Leva alguns segundos.',
  'capture.url': 'Endereço da página',
  'capture.urlPlaceholder': 'https://…',
  'capture.urlHint': 'Um endereço http:// ou https:// público, sem usuário nem senha.',
  'capture.name': 'Nome do registro (opcional)',
  'capture.namePlaceholder': 'Se vazio, <site>-<data>.wacz',
  'capture.consent': 'Consentimento (LGPD) para esta captura',
  'capture.consentText':
    'Declaro que tenho autorização para notarizar esta página e consinto com o tratamento dos dados pessoais nela contidos para registro e prova de existência (LGPD, Lei 13.709/2018, art. 7º, I). A página é capturada pelo serviço e o seu arquivo (WACZ) fica guardado nele; o hash SHA-256 é registrado publicamente em blockchain.',
  'capture.submit': 'Capturar e notarizar',
  'capture.capturing': 'Capturando… (alguns segundos)',
  'capture.done': 'Notarizado: {serial}',
  'capture.page': 'Página',
  'capture.screenshot': 'Captura de tela da página',
  'capture.noScreenshot': 'Sem captura de tela para mostrar.',
  'capture.url.empty': 'Informe o endereço da página.',
  'capture.url.tooLong': 'Endereço longo demais (mais de 8192 caracteres).',
  'capture.url.noScheme': 'Inclua http:// ou https:// no início do endereço.',
  'capture.url.noSchemeSuggest': 'Inclua http:// ou https:// no início do endereço, por exemplo {url}',
  'capture.url.scheme': 'Só páginas http:// ou https:// podem ser capturadas.',
  'capture.url.credentials': 'Tire o usuário e a senha do endereço: eles ficariam no arquivo.',
  'capture.url.invalid': 'Não é um endereço de página válido.',
  'capture.err.invalidUrl':
    'O servidor recusou o endereço: só http(s), sem usuário e senha, de um destino permitido (não local nem privado).',
  'capture.err.consent': 'O servidor exige o consentimento (LGPD) para capturar.',
  'capture.err.forbidden':
    'Seu papel neste espaço não permite capturar páginas (é preciso ser editor ou superior).',
  'capture.err.tooLarge': 'O arquivo da página excede o limite de 250 MB ou a cota; nada foi registrado.',
  'capture.err.rateLimited': 'Muitas capturas (5 por minuto) ou fila cheia; tente novamente em {seconds} s.',
  'capture.err.rateLimitedShort':
    'Muitas capturas (5 por minuto) ou fila cheia; aguarde um pouco e tente novamente.',
  'capture.err.unreachable': 'O site não pôde ser acessado (DNS, conexão ou TLS); nada foi registrado.',
  'capture.err.noBrowser': 'O servidor não tem o Chromium instalado; a captura não está disponível.',
  'capture.err.timeout': 'A captura demorou demais e foi interrompida; nada foi registrado.',
  'capture.err.notOffered': 'Este servidor não oferece captura de páginas web.',

  'detail.back': 'Documentos',
  'detail.serial': 'Número de série',
  'detail.file': 'Arquivo',
  'detail.hash': 'Hash SHA-256',
  'detail.size': 'Tamanho',
  'detail.type': 'Tipo',
  'detail.created': 'Registrado em',
  'detail.consent': 'Consentimento (LGPD)',
  'detail.anchors': 'Âncoras em blockchain',
  'detail.anchorsLive': 'Atualizando automaticamente até o registro nas duas redes.',
  'detail.evm': 'Atestação EAS (EVM)',
  'detail.stacks': 'Contrato Stacks',
  'detail.network': 'Rede',
  'detail.tx': 'Transação',
  'detail.attestation': 'Atestação (UID)',
  'detail.anchoredAt': 'Incluída em',
  'detail.waiting': 'Aguardando inclusão em bloco…',
  'detail.viewExplorer': 'Ver no explorador',
  'detail.viewAttestation': 'Ver atestação',
  'detail.noExplorer': 'Rede local de desenvolvimento: sem explorador público.',
  'detail.publicRecord': 'Registro público',
  'detail.proofs': 'Provas',
  'detail.certificate': 'Certificado de notarização (PDF)',
  'detail.certificateHelp':
    'Contém o hash, as provas Merkle e as transações; assinado pelo serviço quando configurado.',
  'detail.saveCertificate': 'Salvar certificado',
  'ata.title': 'Ata notarial (minuta)',
  'ata.help':
    'Minuta em PDF/A para o tabelião revisar e assinar: serventia, data e hora, solicitante, endereços, narração objetiva, anexo técnico e espaços para selo, MNE, livro e folha.',
  'ata.name': 'Nome do solicitante',
  'ata.cpf': 'CPF',
  'ata.qualification': 'Qualificação (opcional)',
  'ata.email': 'E-mail (opcional)',
  'ata.nameEmpty': 'Informe o nome do solicitante.',
  'ata.nameTooLong': 'Nome longo demais.',
  'ata.cpfEmpty': 'Informe o CPF.',
  'ata.cpfFormat': 'Use 000.000.000-00 ou 11 dígitos.',
  'ata.cpfCheckDigits': 'CPF inválido: os dígitos verificadores não conferem.',
  'ata.request': 'Gerar e salvar minuta',
  'ata.again': 'Salvar a última minuta',
  'ata.saved': '{file} salvo.',
  'detail.openCertificate': 'Abrir',
  'detail.savedSigned': '{file} salvo — assinado pelo serviço (PAdES).',
  'detail.savedUnsigned': '{file} salvo — sem assinatura digital do serviço.',
  'detail.opened': '{file} aberto.',
  'detail.timestamp': 'Carimbo do tempo RFC 3161 (.tsr)',
  'detail.timestampHelp': 'Token de uma Autoridade de Carimbo do Tempo sobre o hash do documento.',
  'detail.saveTimestamp': 'Salvar carimbo do tempo',
  'detail.savedTimestamp': '{file} salvo.',
  'detail.noTsa': 'Este servidor não tem uma Autoridade de Carimbo do Tempo (TSA) configurada.',
  'detail.verifyLocal': 'Conferir um arquivo local',
  'detail.verifyLocalHelp':
    'O hash é calculado neste computador e comparado com o registro. O arquivo não é enviado.',
  'detail.verifyPick': 'Escolher arquivo',
  'detail.verifyDrop': 'Arraste o arquivo para cá',
  'detail.match': 'O arquivo confere com este registro.',
  'detail.mismatch': 'O arquivo NÃO confere com este registro.',
  'detail.stored': 'Registrado',
  'detail.provided': 'Arquivo local',
  'detail.hashing': 'Calculando hash… {pct}%',
  'detail.source': 'Origem',
  'detail.sourceIpfs': 'Importado do IPFS',
  'detail.cid': 'CID (IPFS)',
  'detail.gateway': 'Link no gateway',
  'detail.gatewayLoading': 'Obtendo o link do gateway…',
  'detail.openGateway': 'Abrir no gateway IPFS',
  'detail.ipfsNote':
    'O conteúdo permanece no IPFS, fora do controle do serviço; o registro guarda seu hash SHA-256 e o CID.',

  'verify.title': 'Verificar um arquivo',
  'verify.subtitle':
    'Descubra se um arquivo foi notarizado e veja seu registro público. Não é preciso entrar.',
  'verify.drop': 'Arraste o arquivo para cá',
  'verify.dropHint': 'O hash SHA-256 é calculado neste computador; o arquivo não é enviado.',
  'verify.pick': 'Escolher arquivo',
  'verify.found': 'Arquivo notarizado',
  'verify.notFound': 'Nenhum registro para este arquivo',
  'verify.notFoundHelp': 'Nenhum documento com este hash foi notarizado neste serviço.',
  'verify.bySerial': 'Consultar por número de série',
  'verify.serialPlaceholder': 'Ex.: CARTORIO-7K2M9Q4XTB',
  'verify.lookup': 'Consultar',
  'verify.back': 'Voltar para entrar',
  'verify.cert.title': 'Conferir com o certificado (opcional)',
  'verify.cert.help':
    'Com o certificado em PDF, este navegador confere a prova sem depender deste serviço: o hash do arquivo, a prova de Merkle do recibo anexado ao certificado e os registros nas blockchains, lidos nos endpoints abaixo; depois, sem nenhuma consulta, o carimbo do tempo RFC 3161 e a assinatura PAdES do certificado.',
  'verify.cert.drop': 'Arraste o certificado (PDF) para cá',
  'verify.cert.pick': 'Escolher certificado',
  'verify.cert.chosen': 'Certificado: {name}',
  'verify.cert.endpoints': 'Endpoints das blockchains',
  'verify.cert.evm': 'EVM (JSON-RPC), um por linha',
  'verify.cert.stacks': 'Stacks (API), um por linha',
  'verify.cert.endpointsHelp':
    'Preenchidos com os que o serviço anuncia; acrescente outros de sua confiança: cada um é consultado e todos devem concordar.',
  'verify.cert.run': 'Conferir novamente',
  'verify.cert.needFile': 'Escolha também o arquivo acima para conferir.',
  'verify.cert.checking': 'Conferindo a prova…',
  'verify.cert.ok': 'A prova confere',
  'verify.cert.okHelp': 'Todas as verificações aplicáveis passaram.',
  'verify.cert.incomplete': 'A prova não pôde ser conferida por inteiro (verificação {ids})',
  'verify.cert.incompleteHelp':
    'Nenhuma verificação falhou, mas alguma não pôde ser feita ou foi feita só em parte: veja o motivo em cada uma. Um endpoint indisponível não é evidência contra a prova; tente de novo mais tarde ou com outros endpoints.',
  'verify.cert.failed': 'A prova não confere (verificação {id})',
  'verify.cert.noReceipt':
    'Este PDF não traz o recibo da notarização (receipt.json). Certificados emitidos antes dos recibos não podem ser conferidos aqui; baixe-o de novo no serviço.',
  'verify.cert.badReceipt': 'O recibo anexado a este certificado não pôde ser lido.',
  'verify.cert.badEndpoint':
    'Endpoint recusado: {value}. Use https (http só em 127.0.0.1 ou localhost), sem usuário, senha ou parâmetros.',
  'verify.cert.check.1': 'SHA-256 do arquivo',
  'verify.cert.check.2': 'Prova de Merkle',
  'verify.cert.check.3': 'Atestação EVM (EAS)',
  'verify.cert.check.4': 'Registro na Stacks',
  'verify.cert.check.5': 'Carimbo do tempo (RFC 3161)',
  'verify.cert.check.6': 'Assinatura do certificado (PAdES)',
  'verify.cert.trust': 'Âncoras de confiança (verificações 5 e 6)',
  'verify.cert.trustHelp':
    'Os certificados a que o carimbo do tempo e o assinante do certificado devem se encadear. Sem âncora, a integridade e os carimbos são conferidos, mas não a cadeia.',
  'verify.cert.trust.none': 'Nenhuma: a cadeia de certificados não é conferida',
  'verify.cert.trust.icpBrasil': 'Raízes da ICP-Brasil (incluídas neste programa)',
  'verify.cert.trust.files': 'Certificados em arquivos PEM',
  'verify.cert.trust.drop': 'Arraste os arquivos PEM das autoridades de confiança para cá',
  'verify.cert.trust.chosen': 'Âncoras: {names}',
  'verify.cert.trust.filesHint': 'Até {max} arquivos de 1 MB, com blocos -----BEGIN CERTIFICATE-----.',
  'verify.cert.trust.pick': 'Escolher arquivos PEM',
  'verify.cert.badAnchor.no-certificate':
    '{name} não traz nenhum certificado em PEM (-----BEGIN CERTIFICATE-----): escolha outro arquivo.',
  'verify.cert.badAnchor.too-large': '{name} passa de 1 MB: não é um arquivo de certificados.',
  'verify.cert.badAnchor.too-many': 'Os arquivos escolhidos trazem certificados demais (mais de 256).',
  'verify.cert.chainNotChecked':
    'Cadeia de certificados não conferida: nenhuma âncora de confiança foi escolhida.',
  'verify.cert.at': 'Julgar os certificados na data (verificação 6)',
  'verify.cert.atHelp': 'Vazio: agora. Hora deste computador.',
  'verify.cert.atUtc': 'Ou seja: {at}',
  'verify.cert.level': 'Nível PAdES alcançado: {level} (julgado em {at})',
  'verify.cert.notHigher': 'não mais alto porque: {why}',
  'verify.cert.status.passed': 'confere',
  'verify.cert.status.failed': 'não confere',
  'verify.cert.status.partial': 'em parte',
  'verify.cert.status.not-run': 'não feita',
  'verify.cert.status.not-applicable': 'não se aplica',
  'verify.cert.reason.pending':
    'O recibo registra esta âncora como pendente: confira de novo depois do registro.',
  'verify.cert.reason.no-endpoint': 'Nenhum endpoint informado para esta blockchain.',
  'verify.cert.reason.unavailable':
    'Endpoint indisponível (sem resposta, limite de requisições, rota desativada, outra rede): não é evidência contra a prova.',
  'verify.cert.reason.not-checked': 'Uma parte não pôde ser conferida.',
  'verify.cert.evidence': 'Evidências',

  'settings.title': 'Configurações',
  'settings.server': 'Endereço do servidor',
  'settings.serverHelp':
    'O serviço de notarização que este aplicativo usa. Trocar de servidor encerra a sessão.',
  'settings.serverWeb': 'O cliente web usa sempre o servidor que o serviu.',
  'settings.save': 'Salvar',
  'settings.saved': 'Salvo.',
  'settings.language': 'Idioma',
  'settings.account': 'Conta',
  'settings.signedInAs': 'Conectado como {email}',
  'settings.check': 'Testar conexão',
  'settings.checkOk': 'Servidor respondeu.',
  'settings.token': 'Token do tabelião (certificado A3)',
  'settings.tokenHelp':
    'Caminho do módulo PKCS#11 (driver) instalado pelo fabricante do token, por exemplo /usr/lib/libeTPkcs11.so (SafeNet eToken), /usr/lib/libaetpkss.so (SafeSign, GD Burti), /usr/lib/watchdata/lib/libwdpkcs.so (Watchdata).',
  'settings.tokenPath': 'Módulo PKCS#11',
  'settings.tokenClear': 'Esquecer',
  'sign.title': 'Assinatura do tabelião',
  'sign.help':
    'Assine o certificado com o seu próprio certificado ICP-Brasil, além da assinatura do serviço.',
  'sign.policy': 'Política',
  'sign.policyRb': 'AD-RB (referência básica)',
  'sign.policyRt': 'AD-RT (com carimbo do tempo)',
  'sign.noModule': 'Escolha o módulo PKCS#11 do token nas Configurações.',
  'sign.list': 'Ler certificados do token',
  'sign.none': 'O token não tem certificado que possa assinar.',
  'sign.certificate': 'Certificado',
  'sign.validUntil': 'válido até {date}',
  'sign.pin': 'PIN do token',
  'sign.file': 'Arquivo do certificado A1 (.pfx ou .p12)',
  'sign.password': 'Senha do arquivo',
  'sign.fileNote':
    'O arquivo e a senha não saem deste navegador: só a assinatura e o certificado são enviados.',
  'sign.submit': 'Assinar certificado',
  'sign.signing': 'Assinando…',
  'sign.done': 'Certificado assinado por: {signers}.',

  'join.title': 'Convite para organização',
  'join.accept': 'Aceitar convite',
  'join.accepted': 'Convite aceito. Você agora trabalha nesta organização.',

  'common.copy': 'Copiar',
  'common.copied': 'Copiado',
  'common.loading': 'Carregando…',
  'common.close': 'Fechar',
  'common.signInAgain': 'Entrar novamente',
  'common.details': 'Detalhes técnicos',
  'common.crash': 'Algo deu errado nesta tela.',
  'common.reload': 'Recarregar',

  'err.offline':
    'Não foi possível contatar o servidor em {url}. Verifique se ele está em execução e o endereço.',
  'err.sessionExpired': 'Sua sessão expirou.',
  'err.notSignedIn': 'Entre para continuar.',
  'err.invalidCode': 'Código incorreto ou expirado.',
  'err.tooManyAttempts': 'Código bloqueado após 3 tentativas. Peça um novo código.',
  'err.origin': 'O servidor não aceita solicitações deste endereço (PUBLIC_URL / ALLOWED_ORIGINS).',
  'err.forbidden': 'Você não tem permissão para esta ação neste espaço de trabalho.',
  'err.notFound': 'Não encontrado.',
  'err.gone': 'Não está mais disponível (removido por LGPD ou já utilizado).',
  'err.tooLarge': 'O arquivo excede o limite de 250 MB.',
  'err.rateLimited': 'Muitas solicitações; tente novamente em {seconds} s.',
  'err.rateLimitedShort': 'Muitas solicitações; aguarde um pouco e tente novamente.',
  'err.badRequest': 'Solicitação recusada pelo servidor.',
  'err.unavailable': 'Serviço temporariamente indisponível.',
  'err.badGateway': 'Um serviço externo não respondeu (carimbo do tempo, provedor de identidade).',
  'err.server': 'Erro no servidor.',
  'err.cancelled': 'Cancelado.',
  'err.invalidInput': 'Dados inválidos.',
  'err.file': 'Não foi possível ler o arquivo.',
  'err.invalidContent': 'O servidor enviou um arquivo que não é o pedido; nada foi salvo.',
  'err.insecureUrl':
    'Endereço recusado: com http simples o token de sessão do cartório iria sem criptografia pela rede. Use https:// (http:// só para este computador).',
} as const;

export type MessageKey = keyof typeof pt;

const en: Record<MessageKey, string> = {
  'app.name': 'Notary',
  'app.tagline': 'Registration and proof of existence of documents',
  'nav.documents': 'Documents',
  'nav.notarize': 'Notarize',
  'nav.verify': 'Verify',
  'nav.settings': 'Settings',
  'nav.signOut': 'Sign out',
  'tenant.label': 'Workspace',
  'tenant.personal': 'Personal',
  'tenant.role.owner': 'owner',
  'tenant.role.admin': 'admin',
  'tenant.role.editor': 'editor',
  'tenant.role.reader': 'reader',
  'lang.pt': 'Português',
  'lang.en': 'English',

  'signin.title': 'Sign in',
  'signin.subtitle': 'Use your e-mail: we will send you a 6-digit access code.',
  'signin.email': 'E-mail',
  'signin.sendCode': 'Send code',
  'signin.sending': 'Sending…',
  'signin.code': 'Code received by e-mail',
  'signin.codeSent': 'We sent a code to {email}. It is valid for 5 minutes.',
  'signin.submit': 'Sign in',
  'signin.signingIn': 'Signing in…',
  'signin.otherEmail': 'Use another e-mail',
  'signin.resend': 'Send the code again',
  'signin.expired': 'Your session has expired. Sign in again to continue.',
  'signin.server': 'Server',
  'signin.changeServer': 'Change',
  'signin.verifyWithout': 'Verify a file without signing in',

  'server.downTitle': 'Server unavailable',
  'server.retry': 'Try again',

  'docs.title': 'Documents',
  'docs.subtitle': 'Records of the {tenant} workspace',
  'docs.search': 'Search by name, serial number, hash or CID',
  'docs.filter.all': 'All',
  'docs.filter.pending': 'Registering',
  'docs.filter.registered': 'Registered',
  'docs.col.name': 'File',
  'docs.col.serial': 'Serial number',
  'docs.col.hash': 'SHA-256',
  'docs.col.date': 'Date',
  'docs.col.status': 'Status',
  'docs.empty': 'No documents in this workspace yet.',
  'docs.emptyAction': 'Notarize files',
  'docs.noMatch': 'No document matches the search.',
  'docs.count.one': '1 document',
  'docs.count.other': '{n} documents',
  'docs.refresh': 'Refresh',
  'docs.loadMore': 'Load more',
  'docs.count.more': '{n} documents loaded; more to come',
  'docs.ipfs': 'IPFS',
  'docs.web': 'Web',

  'status.registered': 'Registered',
  'status.pending': 'Registering',
  'status.partial': 'Partly registered',
  'status.evm': 'EVM',
  'status.stacks': 'Stacks',

  'notarize.title': 'Notarize files',
  'notarize.subtitle':
    'Each file’s SHA-256 hash is computed on this computer before anything is sent. Files already registered are not sent again.',
  'notarize.drop': 'Drop files here',
  'notarize.pick': 'Choose files',
  'notarize.limit': 'Up to 250 MB per file. The hash is computed on this computer before sending.',
  'notarize.stage.hashing': 'Computing hash… {pct}%',
  'notarize.stage.checking': 'Checking existing records…',
  'notarize.stage.existing': 'Already registered: {serial}',
  'notarize.stage.ready': 'Ready to send',
  'notarize.stage.queued': 'Queued',
  'notarize.stage.uploading': 'Uploading… {pct}%',
  'notarize.stage.done': 'Notarized: {serial}',
  'notarize.stage.cancelled': 'Cancelled',
  'notarize.stage.error': 'Failed',
  'notarize.consentItem': 'Consent for this file',
  'notarize.consentAll': 'Consent (LGPD) for every file listed',
  'notarize.consentText':
    'I am authorized to upload these files and I consent to the processing of the personal data they contain for registration and proof of existence (LGPD, Law 13.709/2018, Art. 7 I). The file is stored by the service; only its SHA-256 hash is recorded publicly on blockchains.',
  'notarize.submit.one': 'Notarize 1 file',
  'notarize.submit.other': 'Notarize {n} files',
  'notarize.needConsent': 'Tick the consent to send.',
  'notarize.cancel': 'Cancel',
  'notarize.remove': 'Remove',
  'notarize.retry': 'Try again',
  'notarize.open': 'View record',
  'notarize.clearDone': 'Clear finished',
  'notarize.tooLarge': 'Larger than 250 MB: cannot be sent.',
  'notarize.readerRole': 'Your role in this workspace ({role}) does not allow uploading documents.',

  'ipfs.open': 'Import from IPFS',
  'ipfs.title': 'Import from IPFS',
  'ipfs.help':
    'The service fetches the file from its IPFS gateways and checks every block against the CID before recording it. Nothing is sent from this computer and the file is not copied into the service.',
  'ipfs.cid': 'File CID',
  'ipfs.cidPlaceholder': 'bafy… or Qm…',
  'ipfs.cidHint': 'CIDv0 (Qm…) or CIDv1 in base32 (b…), of a file (not of a folder).',
  'ipfs.name': 'Document name (optional)',
  'ipfs.namePlaceholder': 'When empty, the CID itself',
  'ipfs.consent': 'Consent (LGPD) for this file',
  'ipfs.consentText':
    'I am authorized to notarize this file and I consent to the processing of the personal data it contains for registration and proof of existence (LGPD, Law 13.709/2018, Art. 7 I). The content stays on IPFS, outside the service’s control, which keeps only the record; the SHA-256 hash is recorded publicly on blockchains.',
  'ipfs.submit': 'Import and notarize',
  'ipfs.importing': 'Fetching from IPFS and checking it against the CID…',
  'ipfs.done': 'Notarized: {serial}',
  'ipfs.cid.empty': 'Enter the file’s CID.',
  'ipfs.cid.path': 'Enter the bare CID, without ipfs:// or a gateway address.',
  'ipfs.cid.pathSuggest': 'Enter the bare CID, without ipfs:// or a gateway address: {cid}',
  'ipfs.cid.uppercase': 'Write the CIDv1 in lower-case base32 (b…).',
  'ipfs.cid.otherBase':
    'This CIDv1 is in another base (k… base36, z… base58…): convert it to base32 (b…), e.g. with "ipfs cid base32 <CID>".',
  'ipfs.cid.v0': 'A CIDv0 is "Qm" followed by 44 base58 characters; this one is incomplete or altered.',
  'ipfs.cid.v1': 'This CIDv1 is not valid: it is incomplete or altered.',
  'ipfs.cid.codec': 'This CID names IPLD data, not a file: use the CID of a file.',
  'ipfs.cid.hash': 'This CID uses a hash function the service does not verify (sha2-256 only).',
  'ipfs.cid.unknown': 'Not a CID: use a CIDv0 (Qm…) or a CIDv1 in base32 (b…).',
  'ipfs.err.invalidCid':
    'The server refused the CID: only the CID of a file (not of a folder), CIDv0 (Qm…) or CIDv1 in base32 (b…).',
  'ipfs.err.consent': 'The server requires the consent (LGPD) to import.',
  'ipfs.err.forbidden':
    'Your role in this workspace does not allow importing documents (editor or higher is needed).',
  'ipfs.err.tooLarge': 'The file on IPFS exceeds the 250 MB limit; nothing was recorded.',
  'ipfs.err.rateLimited': 'Too many imports; try again in {seconds} s.',
  'ipfs.err.rateLimitedShort': 'Too many imports; wait a moment and try again.',
  'ipfs.err.badGateway':
    'The IPFS gateway failed or returned content that does not match the CID; nothing was recorded.',
  'ipfs.err.notOffered': 'This server does not offer IPFS import.',

  'capture.open': 'Capture a web page',
  'capture.title': 'Capture a web page',
  'capture.help':
    'The service opens the page in an isolated browser, archives everything it loads (WACZ, with a screenshot and a PDF) and records the archive. It takes a few seconds.',
  'capture.url': 'Page address',
  'capture.urlPlaceholder': 'https://…',
  'capture.urlHint': 'A public http:// or https:// address, without user name or password.',
  'capture.name': 'Record name (optional)',
  'capture.namePlaceholder': 'When empty, <site>-<date>.wacz',
  'capture.consent': 'Consent (LGPD) for this capture',
  'capture.consentText':
    'I am authorized to notarize this page and I consent to the processing of the personal data it contains for registration and proof of existence (LGPD, Law 13.709/2018, Art. 7 I). The page is captured by the service and its archive (WACZ) is stored there; the SHA-256 hash is recorded publicly on blockchains.',
  'capture.submit': 'Capture and notarize',
  'capture.capturing': 'Capturing… (a few seconds)',
  'capture.done': 'Notarized: {serial}',
  'capture.page': 'Page',
  'capture.screenshot': 'Screenshot of the page',
  'capture.noScreenshot': 'No screenshot to show.',
  'capture.url.empty': 'Enter the page’s address.',
  'capture.url.tooLong': 'Address too long (over 8192 characters).',
  'capture.url.noScheme': 'Start the address with http:// or https://.',
  'capture.url.noSchemeSuggest': 'Start the address with http:// or https://, e.g. {url}',
  'capture.url.scheme': 'Only http:// or https:// pages can be captured.',
  'capture.url.credentials': 'Remove the user name and password from the address: they would be archived.',
  'capture.url.invalid': 'Not a valid page address.',
  'capture.err.invalidUrl':
    'The server refused the address: only http(s), without user name and password, to an allowed destination (not local or private).',
  'capture.err.consent': 'The server requires the consent (LGPD) to capture.',
  'capture.err.forbidden':
    'Your role in this workspace does not allow capturing pages (editor or higher is needed).',
  'capture.err.tooLarge': 'The page’s archive exceeds the 250 MB limit or the quota; nothing was recorded.',
  'capture.err.rateLimited': 'Too many captures (5 a minute) or the queue is full; try again in {seconds} s.',
  'capture.err.rateLimitedShort':
    'Too many captures (5 a minute) or the queue is full; wait a moment and try again.',
  'capture.err.unreachable': 'The site could not be reached (DNS, connection or TLS); nothing was recorded.',
  'capture.err.noBrowser': 'The server has no Chromium installed; capturing is not available.',
  'capture.err.timeout': 'The capture took too long and was stopped; nothing was recorded.',
  'capture.err.notOffered': 'This server does not offer web page capture.',

  'detail.back': 'Documents',
  'detail.serial': 'Serial number',
  'detail.file': 'File',
  'detail.hash': 'SHA-256 hash',
  'detail.size': 'Size',
  'detail.type': 'Type',
  'detail.created': 'Registered on',
  'detail.consent': 'Consent (LGPD)',
  'detail.anchors': 'Blockchain anchors',
  'detail.anchorsLive': 'Updating automatically until registered on both networks.',
  'detail.evm': 'EAS attestation (EVM)',
  'detail.stacks': 'Stacks contract',
  'detail.network': 'Network',
  'detail.tx': 'Transaction',
  'detail.attestation': 'Attestation (UID)',
  'detail.anchoredAt': 'Included on',
  'detail.waiting': 'Waiting for inclusion in a block…',
  'detail.viewExplorer': 'View in explorer',
  'detail.viewAttestation': 'View attestation',
  'detail.noExplorer': 'Local development network: no public explorer.',
  'detail.publicRecord': 'Public record',
  'detail.proofs': 'Proofs',
  'detail.certificate': 'Notarization certificate (PDF)',
  'detail.certificateHelp':
    'Holds the hash, the Merkle proofs and the transactions; signed by the service when configured.',
  'detail.saveCertificate': 'Save certificate',
  'ata.title': 'Ata notarial (draft)',
  'ata.help':
    'A PDF/A draft for the tabelião to review and sign: serventia, date and time, requester, addresses, objective narration, technical annex and blanks for selo, MNE, book and page.',
  'ata.name': 'Requester’s name',
  'ata.cpf': 'CPF',
  'ata.qualification': 'Qualification (optional)',
  'ata.email': 'E-mail (optional)',
  'ata.nameEmpty': 'Enter the requester’s name.',
  'ata.nameTooLong': 'Name too long.',
  'ata.cpfEmpty': 'Enter the CPF.',
  'ata.cpfFormat': 'Use 000.000.000-00 or 11 digits.',
  'ata.cpfCheckDigits': 'Invalid CPF: its check digits do not match.',
  'ata.request': 'Make and save the draft',
  'ata.again': 'Save the last draft',
  'ata.saved': '{file} saved.',
  'detail.openCertificate': 'Open',
  'detail.savedSigned': '{file} saved — signed by the service (PAdES).',
  'detail.savedUnsigned': '{file} saved — without the service’s digital signature.',
  'detail.opened': '{file} opened.',
  'detail.timestamp': 'RFC 3161 timestamp (.tsr)',
  'detail.timestampHelp': 'A Time-Stamping Authority’s token over the document’s hash.',
  'detail.saveTimestamp': 'Save timestamp',
  'detail.savedTimestamp': '{file} saved.',
  'detail.noTsa': 'This server has no Time-Stamping Authority (TSA) configured.',
  'detail.verifyLocal': 'Check a local file',
  'detail.verifyLocalHelp':
    'The hash is computed on this computer and compared with the record. The file is not sent.',
  'detail.verifyPick': 'Choose file',
  'detail.verifyDrop': 'Drop the file here',
  'detail.match': 'The file matches this record.',
  'detail.mismatch': 'The file does NOT match this record.',
  'detail.stored': 'Registered',
  'detail.provided': 'Local file',
  'detail.hashing': 'Computing hash… {pct}%',
  'detail.source': 'Source',
  'detail.sourceIpfs': 'Imported from IPFS',
  'detail.cid': 'CID (IPFS)',
  'detail.gateway': 'Gateway link',
  'detail.gatewayLoading': 'Getting the gateway link…',
  'detail.openGateway': 'Open on the IPFS gateway',
  'detail.ipfsNote':
    'The content stays on IPFS, outside the service’s control; the record keeps its SHA-256 hash and CID.',

  'verify.title': 'Verify a file',
  'verify.subtitle': 'Find out whether a file was notarized and see its public record. No sign-in needed.',
  'verify.drop': 'Drop the file here',
  'verify.dropHint': 'The SHA-256 hash is computed on this computer; the file is not sent.',
  'verify.pick': 'Choose file',
  'verify.found': 'File notarized',
  'verify.notFound': 'No record for this file',
  'verify.notFoundHelp': 'No document with this hash was notarized on this service.',
  'verify.bySerial': 'Look up a serial number',
  'verify.serialPlaceholder': 'e.g. CARTORIO-7K2M9Q4XTB',
  'verify.lookup': 'Look up',
  'verify.back': 'Back to sign in',
  'verify.cert.title': 'Check against the certificate (optional)',
  'verify.cert.help':
    'With the PDF certificate, this browser checks the proof without relying on this service: the file hash, the Merkle proof of the receipt attached to the certificate, and the records on the blockchains, read from the endpoints below; then, with no request at all, the RFC 3161 timestamp and the certificate’s PAdES signature.',
  'verify.cert.drop': 'Drop the certificate (PDF) here',
  'verify.cert.pick': 'Choose certificate',
  'verify.cert.chosen': 'Certificate: {name}',
  'verify.cert.endpoints': 'Blockchain endpoints',
  'verify.cert.evm': 'EVM (JSON-RPC), one per line',
  'verify.cert.stacks': 'Stacks (API), one per line',
  'verify.cert.endpointsHelp':
    'Filled with the ones the service announces; add others you trust: each one is asked and all must agree.',
  'verify.cert.run': 'Check again',
  'verify.cert.needFile': 'Choose the file above as well to check it.',
  'verify.cert.checking': 'Checking the proof…',
  'verify.cert.ok': 'The proof holds',
  'verify.cert.okHelp': 'Every applicable check passed.',
  'verify.cert.incomplete': 'The proof could not be checked in full (check {ids})',
  'verify.cert.incompleteHelp':
    'No check failed, but some could not run or ran only in part: see the reason under each. An unavailable endpoint is no evidence against the proof; try again later or with other endpoints.',
  'verify.cert.failed': 'The proof does not hold (check {id})',
  'verify.cert.noReceipt':
    'This PDF carries no notarization receipt (receipt.json). Certificates issued before receipts cannot be checked here; download it again from the service.',
  'verify.cert.badReceipt': 'The receipt attached to this certificate could not be read.',
  'verify.cert.badEndpoint':
    'Endpoint refused: {value}. Use https (http only on 127.0.0.1 or localhost), without user, password or parameters.',
  'verify.cert.check.1': 'File SHA-256',
  'verify.cert.check.2': 'Merkle proof',
  'verify.cert.check.3': 'EVM attestation (EAS)',
  'verify.cert.check.4': 'Stacks anchor',
  'verify.cert.check.5': 'Timestamp (RFC 3161)',
  'verify.cert.check.6': 'Certificate signature (PAdES)',
  'verify.cert.trust': 'Trust anchors (checks 5 and 6)',
  'verify.cert.trustHelp':
    'The certificates the timestamp and the certificate’s signer must chain to. Without an anchor, integrity and timestamps are checked, but not the chain.',
  'verify.cert.trust.none': 'None: the certificate chain is not checked',
  'verify.cert.trust.icpBrasil': 'ICP-Brasil roots (included in this program)',
  'verify.cert.trust.files': 'Certificates in PEM files',
  'verify.cert.trust.drop': 'Drop the PEM files of the authorities you trust here',
  'verify.cert.trust.chosen': 'Anchors: {names}',
  'verify.cert.trust.filesHint': 'Up to {max} files of 1 MB, with -----BEGIN CERTIFICATE----- blocks.',
  'verify.cert.trust.pick': 'Choose PEM files',
  'verify.cert.badAnchor.no-certificate':
    '{name} holds no PEM certificate (-----BEGIN CERTIFICATE-----): choose another file.',
  'verify.cert.badAnchor.too-large': '{name} is larger than 1 MB: not a certificate file.',
  'verify.cert.badAnchor.too-many': 'The chosen files hold too many certificates (more than 256).',
  'verify.cert.chainNotChecked': 'Certificate chain not checked: no trust anchor was chosen.',
  'verify.cert.at': 'Judge the certificates at (check 6)',
  'verify.cert.atHelp': 'Empty: now. This computer’s time.',
  'verify.cert.atUtc': 'That is: {at}',
  'verify.cert.level': 'PAdES level reached: {level} (judged at {at})',
  'verify.cert.notHigher': 'not higher because: {why}',
  'verify.cert.status.passed': 'passed',
  'verify.cert.status.failed': 'failed',
  'verify.cert.status.partial': 'partial',
  'verify.cert.status.not-run': 'not run',
  'verify.cert.status.not-applicable': 'not applicable',
  'verify.cert.reason.pending':
    'The receipt records this anchor as pending: check again once it is registered.',
  'verify.cert.reason.no-endpoint': 'No endpoint given for this chain.',
  'verify.cert.reason.unavailable':
    'Endpoint unavailable (no answer, rate-limited, route retired, another network): no evidence against the proof.',
  'verify.cert.reason.not-checked': 'A part could not be checked.',
  'verify.cert.evidence': 'Evidence',

  'settings.title': 'Settings',
  'settings.server': 'Server address',
  'settings.serverHelp': 'The notarization service this app uses. Changing servers signs you out.',
  'settings.serverWeb': 'The web client always uses the server that served it.',
  'settings.save': 'Save',
  'settings.saved': 'Saved.',
  'settings.language': 'Language',
  'settings.account': 'Account',
  'settings.signedInAs': 'Signed in as {email}',
  'settings.check': 'Test connection',
  'settings.checkOk': 'The server answered.',
  'settings.token': "The tabelião's token (A3 certificate)",
  'settings.tokenHelp':
    "Path of the PKCS#11 module (driver) the token maker's installer wrote, e.g. /usr/lib/libeTPkcs11.so (SafeNet eToken), /usr/lib/libaetpkss.so (SafeSign, GD Burti), /usr/lib/watchdata/lib/libwdpkcs.so (Watchdata).",
  'settings.tokenPath': 'PKCS#11 module',
  'settings.tokenClear': 'Forget',
  'sign.title': "The tabelião's signature",
  'sign.help': "Sign the certificate with your own ICP-Brasil certificate, besides the service's signature.",
  'sign.policy': 'Policy',
  'sign.policyRb': 'AD-RB (basic reference)',
  'sign.policyRt': 'AD-RT (with timestamp)',
  'sign.noModule': "Choose the token's PKCS#11 module in Settings.",
  'sign.list': "Read the token's certificates",
  'sign.none': 'The token holds no certificate that may sign.',
  'sign.certificate': 'Certificate',
  'sign.validUntil': 'valid until {date}',
  'sign.pin': "Token's PIN",
  'sign.file': 'A1 certificate file (.pfx or .p12)',
  'sign.password': "File's password",
  'sign.fileNote':
    'The file and its password never leave this browser: only the signature and the certificate are sent.',
  'sign.submit': 'Sign the certificate',
  'sign.signing': 'Signing…',
  'sign.done': 'Certificate signed by: {signers}.',

  'join.title': 'Organization invitation',
  'join.accept': 'Accept invitation',
  'join.accepted': 'Invitation accepted. You now work in this organization.',

  'common.copy': 'Copy',
  'common.copied': 'Copied',
  'common.loading': 'Loading…',
  'common.close': 'Close',
  'common.signInAgain': 'Sign in again',
  'common.details': 'Technical details',
  'common.crash': 'Something went wrong on this screen.',
  'common.reload': 'Reload',

  'err.offline': 'Could not reach the server at {url}. Check that it is running and the address.',
  'err.sessionExpired': 'Your session has expired.',
  'err.notSignedIn': 'Sign in to continue.',
  'err.invalidCode': 'Wrong or expired code.',
  'err.tooManyAttempts': 'Code blocked after 3 attempts. Ask for a new code.',
  'err.origin': 'The server does not accept requests from this address (PUBLIC_URL / ALLOWED_ORIGINS).',
  'err.forbidden': 'You are not allowed to do this in this workspace.',
  'err.notFound': 'Not found.',
  'err.gone': 'No longer available (LGPD-deleted or already used).',
  'err.tooLarge': 'The file exceeds the 250 MB limit.',
  'err.rateLimited': 'Too many requests; try again in {seconds} s.',
  'err.rateLimitedShort': 'Too many requests; wait a moment and try again.',
  'err.badRequest': 'The server refused the request.',
  'err.unavailable': 'Service temporarily unavailable.',
  'err.badGateway': 'An external service did not answer (timestamp authority, identity provider).',
  'err.server': 'Server error.',
  'err.cancelled': 'Cancelled.',
  'err.invalidInput': 'Invalid data.',
  'err.file': 'The file could not be read.',
  'err.invalidContent': 'The server sent a file that is not the one asked for; nothing was saved.',
  'err.insecureUrl':
    "Address refused: plain http would send the notary's session token in clear over the network. Use https:// (http:// only for this computer).",
};

const DICTIONARIES: Record<Language, Record<MessageKey, string>> = { pt, en };

export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

/** The translation function of a language; unknown parameters stay as `{name}`. */
export function translator(language: Language): Translate {
  const dict = DICTIONARIES[language];
  return (key, params) =>
    dict[key].replace(/\{(\w+)\}/g, (whole, name: string) =>
      params && name in params ? String(params[name]) : whole,
    );
}

/** The language to start in: the saved choice, else English only when the system prefers it. */
export function initialLanguage(saved: Language | null, preferred: readonly string[]): Language {
  if (saved) return saved;
  const first = preferred[0]?.toLowerCase() ?? 'pt';
  return first.startsWith('en') ? 'en' : 'pt';
}

/** Headline of an error for the user, in the current language. */
export function errorText(t: Translate, e: ClientError, serverUrl: string): string {
  switch (e.kind) {
    case 'offline':
      return t('err.offline', { url: serverUrl });
    case 'session-expired':
      return t('err.sessionExpired');
    case 'not-signed-in':
      return t('err.notSignedIn');
    case 'invalid-code':
      return t('err.invalidCode');
    case 'too-many-attempts':
      return t('err.tooManyAttempts');
    case 'origin':
      return t('err.origin');
    case 'forbidden':
      return t('err.forbidden');
    case 'not-found':
      return t('err.notFound');
    case 'gone':
      return t('err.gone');
    case 'too-large':
      return t('err.tooLarge');
    case 'rate-limited':
      return e.retryAfterSeconds
        ? t('err.rateLimited', { seconds: e.retryAfterSeconds })
        : t('err.rateLimitedShort');
    case 'bad-request':
      return t('err.badRequest');
    case 'unavailable':
      return t('err.unavailable');
    case 'bad-gateway':
      return t('err.badGateway');
    case 'cancelled':
      return t('err.cancelled');
    case 'invalid-input':
      return t('err.invalidInput');
    case 'file':
      return t('err.file');
    case 'invalid-content':
      return t('err.invalidContent');
    case 'insecure-url':
      return t('err.insecureUrl');
    case 'signing':
      // The token's or the A1 file's own sentence, already in the language asked (token-signing.ts, web-pkcs12.ts).
      return e.message;
    default:
      return t('err.server');
  }
}

export const I18nContext = createContext<{ language: Language; t: Translate }>({
  language: 'pt',
  t: translator('pt'),
});

export function useI18n() {
  return useContext(I18nContext);
}
