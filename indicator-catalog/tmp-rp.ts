import { startReferenceProvider } from './reference-provider/src/server';
const t0 = performance.now();
const p = await startReferenceProvider({ host: '127.0.0.1', port: 0 });
console.log('start ms', performance.now() - t0, p.url);
const get = async (u: string) => { const t = performance.now(); const r = await fetch(p.url + u); const j = await r.json(); console.log(r.status, u, (performance.now()-t).toFixed(1)+'ms', JSON.stringify(j).slice(0, 400)); };
await get('/indicator-types');
await get('/indicator-types/demografia/indicators?pageSize=2&page=2');
await get('/indicators/by-geocode/3550308?indicator=POP_EST');
await get('/indicators/by-geocode/3550308?type=demografia&year=2021');
await get('/indicator-values?indicatorId=POP_PART_UF&pageSize=3');
await get('/indicator-values?indicatorId=POP_PART_UF&pageSize=3&page=2');
await get('/indicator-values?indicatorId=SAU_DENGUE');
for (const n of ['sao paulo', 'Sao Paolo', 'SÃO PAULO', 'santa maria', 'Santa Maria - RN', 'belo horizont', 'brasilia', 'florianopolis', 'Florianópoles', 'rio de janiero', 'pau darco', 'xyzzy'])
  await get('/ibge/cities?name=' + encodeURIComponent(n) + '&pageSize=2');
await get('/indicators/by-geocode/12345');
await p.close();
