/**
 * How the catalog registers the reference provider (spec, Provider registration). The publisher fields
 * are those of the values it serves: IBGE population estimates as converted by Brasil.IO, CC BY-SA 4.0, to
 * be cited as "Fonte: IBGE, dados tratados por Álvaro Justen/Brasil.IO" (data/SOURCE.md): "Fonte: " followed
 * by `publisherName`.
 */
export function referenceProviderRegistration(baseUrl: string) {
  return {
    slug: 'ibge-referencia',
    name: 'Indicadores municipais IBGE (provedor de referência)',
    kind: 'geo-indica-rest',
    baseUrl,
    publisherName: 'IBGE, dados tratados por Álvaro Justen/Brasil.IO',
    publisherUrl: 'https://brasil.io/',
    license: 'CC BY-SA 4.0',
  };
}
