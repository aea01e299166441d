// The Express tests install both majors under aliases (express4, express5); both take the types of @types/express.
declare module 'express4' {
  import express = require('express')
  export = express
}
declare module 'express5' {
  import express = require('express')
  export = express
}
