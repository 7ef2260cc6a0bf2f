// openapi-validate.cjs FILE: validates an OpenAPI document with
// @apidevtools/swagger-parser (schema and $refs), for hub/mockhub's Go
// test. Prints VALID and exits 0, or the error and exits 1.
'use strict';
const SwaggerParser = require('@apidevtools/swagger-parser');

SwaggerParser.validate(process.argv[2])
  .then((api) => { console.log('VALID ' + api.info.title + ' ' + Object.keys(api.paths).length + ' paths'); })
  .catch((err) => { console.log('INVALID ' + String(err && err.message || err)); process.exit(1); });
